import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createTestApp, type TestApp, type Seed } from '../helpers/harness.js';
import { ROOT } from '../../scripts/sdk-generate.js';
import { removeTempConfigDirs, tempConfigDir, userCodeIn } from './cli-harness.js';

/**
 * The real `wsp` binary (bin/wsp.js, the built dist/) in subprocesses, against a real
 * `wsp serve` on the test's database: login approved from the test, tokens, secrets, --json.
 */
const BIN = path.join(ROOT, 'bin/wsp.js');
let h: TestApp;
let s: Seed;
let url: string;
let server: ChildProcess;
let configDir: string;

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

/** Only what the commands need, so nothing of the developer's own setup leaks in. */
const baseEnv = () => ({ PATH: process.env.PATH ?? '', HOME: configDir });

before(async () => {
  h = await createTestApp();
  // The server runs on real time: the seeded sessions must be fresh by it.
  h.clock.set(Date.now());
  s = await h.seed();
  configDir = tempConfigDir();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...baseEnv(), ...h.dbEnv, PORT: String(port), HOST: '127.0.0.1', WSP_PUBLIC_URL: url, WSP_MASTER_KEY: h.config.masterKey!, WSP_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 150 || server.exitCode !== null) throw new Error('wsp serve did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
});
after(async () => {
  server.kill('SIGTERM');
  await new Promise((r) => (server.exitCode !== null ? r(null) : server.once('exit', r)));
  removeTempConfigDirs();
  await h.close();
});

interface Result {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs `wsp <argv>`; `onStderr` sees the error stream as it grows. */
function wsp(argv: string[], opts: { stdin?: Buffer; env?: Record<string, string>; onStderr?: (text: string) => void } = {}): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: { ...baseEnv(), WSP_CONFIG_DIR: configDir, WSP_SERVER: url, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let err = '';
  child.stdout!.on('data', (c: Buffer) => out.push(c));
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
    opts.onStderr?.(err);
  });
  child.stdin!.end(opts.stdin ?? Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`wsp ${argv.join(' ')} hung; stderr: ${err}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
  });
}

const json = (r: Result) => JSON.parse(r.stdout.toString());

test('wsp login (approved from the test), then tokens and secrets round trips with --json', async () => {
  let approval: Promise<Response> | undefined;
  const login = await wsp(['login', '--json'], {
    onStderr: (text) => {
      const code = userCodeIn(text);
      if (code && !approval) {
        approval = fetch(`${url}/v1/oauth/device/approve`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.owner.session}`, 'content-type': 'application/json' },
          body: JSON.stringify({ user_code: code }),
        });
      }
    },
  });
  assert.equal((await approval)?.status, 200);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stderr, new RegExp(`open ${url}/device`));
  assert.deepEqual(json(login), { server: url, user_id: s.owner.userId, workspace: s.workspaceId, credentials_file: path.join(configDir, 'credentials.json') });
  assert.equal(fs.statSync(path.join(configDir, 'credentials.json')).mode & 0o777, 0o600);

  const who = await wsp(['whoami', '--json']);
  assert.equal(who.code, 0, who.stderr);
  assert.equal(json(who).user.id, s.owner.userId);
  assert.equal(json(who).workspace.id, s.workspaceId);

  // Tokens: create, list, revoke.
  const created = await wsp(['tokens', 'create', '--name', 'from-cli', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const token = json(created);
  assert.match(token.token, /^sk_svc_[0-9A-Za-z]{38}$/);
  assert.ok(json(await wsp(['tokens', 'list', '--json'])).data.some((t: { id: string }) => t.id === token.id));
  assert.equal((await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token.token}` } })).status, 200);
  const revoked = await wsp(['tokens', 'revoke', token.id, '--json']);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.deepEqual(json(revoked), { id: token.id, revoked: true });
  assert.ok(!json(await wsp(['tokens', 'list', '--json'])).data.some((t: { id: string }) => t.id === token.id));
  assert.equal((await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token.token}` } })).status, 401);

  // Secrets: a payload piped in comes back byte for byte.
  const secret = json(await wsp(['secrets', 'create', 'cli-secret', '--json']));
  assert.match(secret.id, /^sec_/);
  const payload = Buffer.from('line one\n\u0000binary\xff', 'latin1');
  const added = await wsp(['secrets', 'add-version', secret.id, '--json'], { stdin: payload });
  assert.equal(added.code, 0, added.stderr);
  const version = json(added);
  const accessed = await wsp(['secrets', 'access', secret.id, version.id]);
  assert.equal(accessed.code, 0, accessed.stderr);
  assert.deepEqual(accessed.stdout, payload);
  assert.equal(json(await wsp(['secrets', 'disable', secret.id, version.id, '--json'])).state, 'disabled');
  assert.equal((await wsp(['secrets', 'access', secret.id, version.id])).code, 1);
  assert.equal(json(await wsp(['secrets', 'enable', secret.id, version.id, '--json'])).state, 'enabled');
  assert.equal(json(await wsp(['secrets', 'destroy', secret.id, version.id, '--json'])).state, 'destroyed');

  const logout = await wsp(['logout']);
  assert.equal(logout.code, 0, logout.stderr);
  const after = await wsp(['whoami']);
  assert.equal(after.code, 3);
});

test('the binary’s exit codes: usage 2, server down 4', async () => {
  assert.equal((await wsp(['tokens', 'create'])).code, 2);
  assert.equal((await wsp(['--help'])).code, 0);
  const port = await freePort();
  const down = await wsp(['login', '--server', `http://127.0.0.1:${port}`]);
  assert.equal(down.code, 4);
  assert.match(down.stderr, /cannot reach the server/);
  assert.ok(!/at .*\.js:\d+/.test(down.stderr), 'no stack trace');
});
