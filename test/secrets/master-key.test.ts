import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { createTestApp, as, type TestApp } from '../helpers/harness.js';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import { keyIdOf } from '../../src/secrets/crypto.js';
import { secretClient } from './secret-client.js';
import { REPO_ROOT } from '../../scripts/repo-root.js';

const root = REPO_ROOT;
const apps: TestApp[] = [];
after(async () => {
  for (const a of apps) await a.close();
});

async function testApp(config: Partial<Config> = {}) {
  const h = await createTestApp({ config });
  apps.push(h);
  return h;
}

/** Another server process on the same database, with its own settings. */
async function startAnother(h: TestApp, config: Partial<Config>) {
  const app = await buildApp({ config: { ...h.config, ...config }, database: h.database, clock: h.clock });
  await app.close();
}

const key = () => randomBytes(32).toString('base64');

describe('WSP_MASTER_KEY', () => {
  test('must be padded base64 of exactly 32 bytes: anything else stops the start with a clear message that never echoes it', () => {
    const good = key();
    assert.equal(loadConfig({ WSP_MASTER_KEY: good }).masterKey, good);
    const bad = [
      'not a key',
      randomBytes(31).toString('base64'),
      randomBytes(33).toString('base64'),
      good.slice(0, 43),
      `-${good.slice(1)}`,
      `${good.slice(0, 10)} ${good.slice(11)}`,
      randomBytes(32).toString('hex'),
    ];
    for (const value of bad) {
      assert.throws(
        () => loadConfig({ WSP_MASTER_KEY: value }),
        (err: Error) => err instanceof ConfigError && /WSP_MASTER_KEY must be the base64 of exactly 32/.test(err.message) && !err.message.includes(value),
        value,
      );
    }
    assert.deepEqual(loadConfig({ WSP_MASTER_KEY: good, WSP_MASTER_KEY_PREVIOUS: ` ${good} ,${good}` }).masterKeyPrevious, [good, good]);
    assert.throws(() => loadConfig({ WSP_MASTER_KEY: good, WSP_MASTER_KEY_PREVIOUS: `${good},short` }), /WSP_MASTER_KEY_PREVIOUS must be/);
  });

  test('the wsp command refuses to run with an invalid WSP_MASTER_KEY (exit 1, the reason on stderr)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-key-'));
    try {
      const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/main.ts'), 'admin', 'migrate'], {
        cwd: root,
        env: { ...process.env, WSP_MASTER_KEY: 'c2hvcnQ=', WSP_DATA_DIR: dir, DATABASE_URL: '' },
        encoding: 'utf8',
      });
      assert.equal(res.status, 1, res.stderr);
      assert.match(res.stderr, /error: WSP_MASTER_KEY must be the base64 of exactly 32 random bytes/);
      assert.deepEqual(fs.readdirSync(dir), [], 'nothing was created');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a server with another master key than the database was set up with refuses to start, secrets or not', async () => {
    const h = await testApp();
    const ownId = keyIdOf(Buffer.from(h.config.masterKey!, 'base64'));
    const wrong = key();
    await assert.rejects(startAnother(h, { masterKey: wrong }), (err: Error) => {
      assert.match(err.message, /is not the one this database uses/);
      assert.ok(err.message.includes(ownId) && err.message.includes(keyIdOf(Buffer.from(wrong, 'base64'))));
      assert.ok(!err.message.includes(wrong) && !err.message.includes(h.config.masterKey!), 'no key material in the message');
      return true;
    });
    // The right key starts, with or without secrets.
    await startAnother(h, {});
    const s = await h.seed();
    await secretClient(h, as(s.apiToken)).createSecret();
    await assert.rejects(startAnother(h, { masterKey: wrong }), /is not the one this database uses/);
  });

  test('data keys wrapped by a master key the server lacks stop the start, naming the key id', async () => {
    const h = await testApp();
    const s = await h.seed();
    const secret = await secretClient(h, as(s.apiToken)).createSecret();
    await h.database.db.updateTable('secrets').set({ key_id: 'feedfacefeedface' }).where('id', '=', secret.id).execute();
    await assert.rejects(startAnother(h, {}), /wrapped by master key id\(s\) feedfacefeedface/);
  });
});

describe('the key file (no WSP_MASTER_KEY)', () => {
  test('is made on first start in the data directory, 0600, and every later start uses it', async () => {
    const h = await testApp({ masterKey: undefined });
    const file = path.join(h.config.dataDir, 'master.key');
    const stat = fs.statSync(file);
    assert.equal(stat.mode & 0o777, 0o600);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^[A-Za-z0-9+/]{43}=\n$/);
    const s = await h.seed();
    const api = secretClient(h, as(s.apiToken));
    const secret = await api.createSecret();
    const v = await api.addVersion(secret.id, Buffer.from('from the key file'));
    const row = await h.database.db.selectFrom('secrets').select('key_id').where('id', '=', secret.id).executeTakeFirstOrThrow();
    assert.equal(row.key_id, keyIdOf(Buffer.from(text.trim(), 'base64')));

    const again = await buildApp({ config: h.config, database: h.database, clock: h.clock });
    try {
      const res = await again.inject({ method: 'GET', url: `/v1/secrets/${secret.id}/versions/${v.id}:access`, headers: as(s.apiToken) });
      assert.equal(Buffer.from(res.json().data, 'base64').toString(), 'from the key file');
    } finally {
      await again.close();
    }
    assert.equal(fs.readFileSync(file, 'utf8'), text, 'the file was not replaced');
  });

  test('a second instance with a key file of its own (another data directory) refuses to start: instances must share the key', async () => {
    const h = await testApp({ masterKey: undefined });
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-key-'));
    try {
      await assert.rejects(startAnother(h, { dataDir: elsewhere }), /Every server instance on one database needs the same WSP_MASTER_KEY/);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('a key file readable by others, or not holding a key, stops the start', async () => {
    const h = await testApp({ masterKey: undefined });
    const file = path.join(h.config.dataDir, 'master.key');
    fs.chmodSync(file, 0o644);
    await assert.rejects(startAnother(h, {}), /master\.key is accessible by other users \(mode 644\): chmod 600 it/);
    fs.chmodSync(file, 0o600);
    const original = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, 'garbage\n');
    await assert.rejects(startAnother(h, {}), /master\.key must hold the base64 of exactly 32 bytes/);
    fs.writeFileSync(file, original);
    await startAnother(h, {});
  });
});
