import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { ConfigError, Environment, loadConfig } from '../../src/config.js';

/**
 * The server's settings have one source, the `Environment` schema of src/config.ts: what each
 * variable accepts, its default and its description. The README's table lists the same
 * variables, and the defaults it states are the ones the schema applies.
 */
const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Operator commands'));

test('the README lists every variable of the schema, and nothing the schema does not read', () => {
  const documented = new Set([...table.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
  const read = Object.keys(Environment.properties);
  assert.deepEqual(
    read.filter((name) => !documented.has(name)),
    [],
    'read but not documented',
  );
  assert.deepEqual(
    [...documented].filter((name) => !read.includes(name)),
    [],
    'documented but not read',
  );
});

test('the defaults the README states are the schema defaults, and each variable is described', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.port, 8080);
  assert.equal(defaults.host, '0.0.0.0');
  assert.equal(defaults.dataDir, path.resolve('./data'));
  assert.equal(defaults.authFailuresPerMinute, 30);
  assert.equal(defaults.shutdownGraceSeconds, 30);
  assert.equal(defaults.provider.id, 'hetzner');
  assert.equal(defaults.provider.timeoutMs, 10_000);
  assert.equal(defaults.suspensionRetentionDays, 30);
  assert.equal(defaults.schedulerIntervalSeconds, 60);
  assert.equal(defaults.jobLeaseSeconds, 60);
  assert.equal(defaults.logLevel, 'info');
  for (const [name, schema] of Object.entries(Environment.properties)) {
    assert.ok((schema as { description?: string }).description, `${name} has a description`);
    const row = table.split('\n').find((line) => line.includes(`\`${name}\``));
    const stated = (schema as { default?: string }).default;
    if (stated !== undefined && row) assert.ok(row.includes(`\`${stated}\``), `the README's row of ${name} states its default ${stated}: ${row}`);
  }
});

test('an empty variable is unset; numbers are decoded once; a bad one names the variable and the value', () => {
  assert.equal(loadConfig({ PORT: '', WSP_JOB_LEASE_SECONDS: '007' }).port, 8080);
  assert.equal(loadConfig({ WSP_JOB_LEASE_SECONDS: '007' }).jobLeaseSeconds, 7);
  assert.throws(
    () => loadConfig({ PORT: 'eighty' }),
    (e: Error) => e instanceof ConfigError && e.message === 'PORT must be a non-negative integer, got "eighty"',
  );
  assert.throws(
    () => loadConfig({ WSP_JOB_LEASE_SECONDS: '0' }),
    (e: Error) => e instanceof ConfigError && e.message === 'WSP_JOB_LEASE_SECONDS must be at least 1, got 0',
  );
  assert.throws(
    () => loadConfig({ WSP_PROVIDER_ID: 'Bad' }),
    (e: Error) => e instanceof ConfigError && e.message === 'WSP_PROVIDER_ID must be a provider id such as hetzner: a lower-case letter, then up to 31 of a-z, 0-9, _ and -, got "Bad"',
  );
  for (const [name, value] of [
    ['WSP_TRUST_PROXY', 'a;b'],
    ['WSP_OIDC_AUTO_CREATE', 'yes'],
    ['WSP_OIDC_ISSUER', 'ftp://x'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (e: Error) => e instanceof ConfigError && !/[\^$]|\\[a-z]/.test(e.message) && e.message.startsWith(`${name} must be `),
      name,
    );
  }
});

test('WSP_TRUST_PROXY: unset trusts nobody; a hop count; addresses, ranges and keywords; anything else names the bad item', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ WSP_TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(loadConfig({ WSP_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1, fd00::/8,loopback' }).trustProxy, ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', 'loopback']);
  assert.throws(
    () => loadConfig({ WSP_TRUST_PROXY: '0' }),
    (e: Error) => e instanceof ConfigError && /hop count of at least 1/.test(e.message),
  );
  for (const [value, item] of [
    ['10.0.0.0/33', '10.0.0.0/33'],
    ['127.0.0.1, proxy', 'proxy'],
    ['1.2.3.4/8/9', '1.2.3.4/8/9'],
    ['::1/129', '::1/129'],
  ]) {
    assert.throws(
      () => loadConfig({ WSP_TRUST_PROXY: value }),
      (e: Error) => e instanceof ConfigError && e.message.includes(`"${item}"`),
      value,
    );
  }
});

test('connection deadlines: seconds in the environment, the header deadline at most 10 s of the request one', () => {
  assert.deepEqual(loadConfig({ WSP_REQUEST_TIMEOUT_SECONDS: '4', WSP_IDLE_TIMEOUT_SECONDS: '9', WSP_KEEP_ALIVE_TIMEOUT_SECONDS: '3' }).http, {
    requestTimeoutMs: 4000,
    headersTimeoutMs: 4000,
    idleTimeoutMs: 9000,
    keepAliveTimeoutMs: 3000,
    maxHeaderBytes: 16384,
  });
  assert.equal(loadConfig({ WSP_REQUEST_TIMEOUT_SECONDS: '60' }).http.headersTimeoutMs, 10_000);
});

test("WSP_MASTER_KEY_FILE: the key is the file's content (a container secret); not with WSP_MASTER_KEY; a bad file is named, its content never shown", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-key-file-'));
  try {
    const key = Buffer.alloc(32, 7).toString('base64');
    const file = path.join(dir, 'wsp_master_key');
    // A secret file as orchestrators mount it: readable by others, ending in a newline.
    fs.writeFileSync(file, `${key}\n`, { mode: 0o644 });
    assert.equal(loadConfig({ WSP_MASTER_KEY_FILE: file }).masterKey, key);
    assert.equal(loadConfig({ WSP_MASTER_KEY: key }).masterKey, key);
    assert.throws(
      () => loadConfig({ WSP_MASTER_KEY_FILE: file, WSP_MASTER_KEY: key }),
      (e: Error) => e instanceof ConfigError && /both set/.test(e.message),
    );
    assert.throws(
      () => loadConfig({ WSP_MASTER_KEY_FILE: path.join(dir, 'absent') }),
      (e: Error) => e instanceof ConfigError && e.message.includes('absent') && e.message.includes('ENOENT'),
    );
    fs.writeFileSync(file, 'not-a-key-at-all\n');
    assert.throws(
      () => loadConfig({ WSP_MASTER_KEY_FILE: file }),
      (e: Error) => e instanceof ConfigError && e.message.includes(file) && !e.message.includes('not-a-key-at-all'),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
