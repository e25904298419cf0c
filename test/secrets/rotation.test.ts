import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { createTestApp, as, firstError, type TestApp, type Seed } from '../helpers/harness.js';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { App } from '../../src/http/fastify-types.js';
import { runAdmin } from '../../src/cli/admin.js';
import { runWsp } from '../helpers/processes.js';
import { keyIdOf } from '../../src/secrets/crypto.js';
import { rotateMasterKey } from '../../src/secrets/rotation.js';
import { secretClient } from './secret-client.js';

/**
 * `wsp admin rotate-master-key` re-wraps every data key under a new master key while servers
 * keep answering: they unwrap with any key they know, and a server using the key file picks
 * up the new key on its own.
 */
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const idOf = (base64: string) => keyIdOf(Buffer.from(base64, 'base64'));

async function setUp(config: Partial<Config> = {}) {
  const h = await createTestApp({ config });
  closers.push(() => h.close());
  const s = await h.seed();
  const stored: { secretId: string; versionId: string; payload: Buffer }[] = [];
  const api = secretClient(h, as(s.apiToken));
  for (let i = 0; i < 12; i++) {
    const secret = await api.createSecret();
    for (let j = 0; j < 2; j++) {
      const payload = randomBytes(40);
      stored.push({ secretId: secret.id, versionId: (await api.addVersion(secret.id, payload)).id, payload });
    }
  }
  return { h, s, stored };
}

async function another(h: TestApp, config: Partial<Config>): Promise<App> {
  const app = await buildApp({ config: { ...h.config, ...config }, database: h.database, clock: h.clock });
  closers.push(() => app.close());
  return app;
}

const keyIds = async (h: TestApp) => [...new Set((await h.database.db.selectFrom('secrets').select('key_id').execute()).map((r) => r.key_id))];

/**
 * Reads every stored payload through `app`, over and over while `during` runs; every read must
 * succeed. `midway` counts the reads made while `during` ran and the data keys were wrapped under
 * more than one master key both just before and just after the read: reads in the middle of a
 * rotation, some secrets re-wrapped and others not yet. `onRead` is called after each read.
 */
async function readThroughout(h: TestApp, app: App, s: Seed, stored: Awaited<ReturnType<typeof setUp>>['stored'], during: Promise<unknown>, onRead: () => void = () => undefined) {
  let done = false;
  let reads = 0;
  let midway = 0;
  const mixed = async () => !done && (await keyIds(h)).length > 1;
  const reader = (async () => {
    do {
      for (const x of stored) {
        const before = await mixed();
        const res = await app.inject({ method: 'GET', url: `/v1/secrets/${x.secretId}/versions/${x.versionId}:access`, headers: as(s.apiToken) });
        assert.equal(res.statusCode, 200, res.body);
        assert.ok(Buffer.from(res.json().data, 'base64').equals(x.payload));
        reads++;
        if (before && (await mixed())) midway++;
        onRead();
        // A turn of the event loop between reads: a rotation in another process is heard of.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } while (!done);
  })();
  const result = await during.finally(() => {
    done = true;
  });
  await reader;
  return { result, reads, midway };
}

/**
 * Paces a rotation by the reads: `paced(db)` is `db` whose every query first waits for the next
 * read to complete (`tick`), or for `fallbackMs` when no read comes (one blocked behind the
 * rotation itself). Left alone, a rotation barely overlaps the reads: on SQLite every query
 * answers within microtasks, and the whole rotation ran during the first read (on PostgreSQL,
 * one read in the middle at best).
 */
function pacer(fallbackMs = 1_000) {
  let waiting: (() => void)[] = [];
  const next = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, fallbackMs);
      waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  const EXECUTE = new Set(['execute', 'executeTakeFirst', 'executeTakeFirstOrThrow']);
  // Kysely's builders are immutable: every method returns a new one, so each is wrapped in turn.
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, prop) {
        const value = Reflect.get(obj, prop, obj) as unknown;
        if (typeof value !== 'function') return value;
        if (typeof prop === 'string' && EXECUTE.has(prop)) {
          return async (...args: unknown[]) => {
            await next();
            return (value as (...a: unknown[]) => unknown).apply(obj, args);
          };
        }
        return (...args: unknown[]) => {
          const out = (value as (...a: unknown[]) => unknown).apply(obj, args);
          return out !== null && typeof out === 'object' && typeof (out as { execute?: unknown }).execute === 'function' ? wrap(out) : out;
        };
      },
    });
  return {
    paced: <T extends object>(db: T): T => wrap(db),
    tick: () => {
      const due = waiting;
      waiting = [];
      for (const resolve of due) resolve();
    },
  };
}

const ciphertexts = async (h: TestApp) => await h.database.db.selectFrom('secret_versions').select(['id', 'ciphertext']).orderBy('id').execute();
const recordedKeyId = async (h: TestApp) => (await h.database.db.selectFrom('settings').select('value').where('key', '=', 'secrets_master_key_id').executeTakeFirstOrThrow()).value;

test('WSP_MASTER_KEY: with the old key in WSP_MASTER_KEY_PREVIOUS, servers read throughout; afterwards the new key alone suffices', async (t) => {
  const { h, s, stored } = await setUp();
  const oldKey = h.config.masterKey!;
  const newKey = randomBytes(32).toString('base64');
  const before = await ciphertexts(h);
  // The rollout comes first: every server gets the new key, and the old one as previous.
  const rolled = await another(h, { masterKey: newKey, masterKeyPrevious: [oldKey] });

  // Each query of the rotation waits for a read: reads at every stage of it, not only before or after.
  const pace = pacer();
  const rotation = rotateMasterKey(pace.paced(h.database.db), { masterKey: newKey, masterKeyPrevious: [oldKey], dataDir: h.config.dataDir });
  const { result, reads, midway } = await readThroughout(h, rolled, s, stored, rotation, pace.tick);
  // Throughout: reads went on, every one a success, while some data keys were re-wrapped and others not yet.
  t.diagnostic(`${reads} reads, ${midway} of them in the middle of the rotation`);
  assert.ok(midway >= 1, `${midway} of ${reads} reads were made while some data keys were re-wrapped and others not yet`);
  assert.deepEqual(result, { key_id: idOf(newKey), key_source: 'WSP_MASTER_KEY', rewrapped: 12, remaining: 0, unreadable: [] });
  assert.deepEqual(await keyIds(h), [idOf(newKey)]);
  assert.equal(await recordedKeyId(h), idOf(newKey));
  assert.deepEqual(await ciphertexts(h), before, 'payloads were not touched');

  // A server still holding only the old key cannot unwrap any more: a clear 500 7204, not garbage.
  const x = stored[0]!;
  const stale = await h.app.inject({ method: 'GET', url: `/v1/secrets/${x.secretId}/versions/${x.versionId}:access`, headers: as(s.apiToken) });
  assert.equal(stale.statusCode, 500);
  assert.equal(firstError(stale.json()).code, 7204);
  // ... and cannot start again; the new key alone can, and reads everything.
  await assert.rejects(another(h, { masterKey: oldKey, masterKeyPrevious: [] }), /is not the one this database uses/);
  const fresh = await another(h, { masterKey: newKey, masterKeyPrevious: [] });
  await readThroughout(h, fresh, s, stored, Promise.resolve());
  // Running it again finds nothing left to do.
  assert.equal((await rotateMasterKey(h.database.db, { masterKey: newKey, masterKeyPrevious: [], dataDir: h.config.dataDir })).rewrapped, 0);
});

test('key file: the command writes a new key, keeps the old one in master.key.previous, and the running server follows', async () => {
  const { h, s, stored } = await setUp({ masterKey: undefined });
  const keyFile = path.join(h.config.dataDir, 'master.key');
  const oldText = fs.readFileSync(keyFile, 'utf8').trim();
  const out = new PassThrough();
  const err = new PassThrough();
  let printed = '';
  out.on('data', (c: Buffer) => (printed += c.toString()));
  err.on('data', (c: Buffer) => (printed += c.toString()));

  const env = { ...h.dbEnv, WSP_MASTER_KEY: '', WSP_MASTER_KEY_PREVIOUS: '' };
  // Its own process, as an operator runs it, with a SQLite writer of its own beside the server's
  // (in one process the two would share one: src/db/database.ts).
  const { result } = await readThroughout(h, h.app, s, stored, runWsp(['admin', 'rotate-master-key', '--json'], env));
  const run = result as Awaited<ReturnType<typeof runWsp>>;
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const report = JSON.parse(run.stdout);
  const newText = fs.readFileSync(keyFile, 'utf8').trim();
  assert.notEqual(newText, oldText);
  assert.deepEqual(report, { key_id: idOf(newText), key_source: keyFile, rewrapped: 12, remaining: 0, unreadable: [] });
  assert.deepEqual(fs.readFileSync(path.join(h.config.dataDir, 'master.key.previous'), 'utf8').trim().split('\n'), [oldText]);
  for (const f of ['master.key', 'master.key.previous']) assert.equal(fs.statSync(path.join(h.config.dataDir, f)).mode & 0o777, 0o600, f);
  assert.deepEqual(
    fs.readdirSync(h.config.dataDir).filter((f) => f.includes('.tmp-')),
    [],
    'no temporary files left',
  );
  assert.deepEqual(await keyIds(h), [idOf(newText)]);

  // The server that was running all along reads every secret and wraps new ones under the new key.
  await readThroughout(h, h.app, s, stored, Promise.resolve());
  const created = await secretClient(h, as(s.apiToken)).createSecret();
  const row = await h.database.db.selectFrom('secrets').select('key_id').where('id', '=', created.id).executeTakeFirstOrThrow();
  assert.equal(row.key_id, idOf(newText));

  // A second rotation keeps both older keys.
  assert.equal(await runAdmin(['rotate-master-key', '--json'], out, err, env), 0, printed);
  const third = fs.readFileSync(keyFile, 'utf8').trim();
  assert.deepEqual(fs.readFileSync(path.join(h.config.dataDir, 'master.key.previous'), 'utf8').trim().split('\n').sort(), [oldText, newText].sort());
  assert.deepEqual(await keyIds(h), [idOf(third)]);
  await readThroughout(h, h.app, s, stored, Promise.resolve());
});

test('a corrupt data key is reported and left alone; a key id nobody has stops the command with its id', async () => {
  const { h } = await setUp();
  const [victim] = await h.database.db.selectFrom('secrets').select(['id', 'wrapped_key']).orderBy('id').limit(1).execute();
  const flipped = Buffer.from(victim!.wrapped_key, 'base64');
  flipped[15] = flipped[15]! ^ 0xff;
  await h.database.db
    .updateTable('secrets')
    .set({ wrapped_key: flipped.toString('base64') })
    .where('id', '=', victim!.id)
    .execute();
  const newKey = randomBytes(32).toString('base64');
  const config = { masterKey: newKey, masterKeyPrevious: [h.config.masterKey!], dataDir: h.config.dataDir };
  const result = await rotateMasterKey(h.database.db, config);
  assert.deepEqual({ ...result, key_id: '' }, { key_id: '', key_source: 'WSP_MASTER_KEY', rewrapped: 11, remaining: 0, unreadable: [victim!.id] });

  await h.database.db.updateTable('secrets').set({ key_id: 'abababababababab' }).where('id', '=', victim!.id).execute();
  await assert.rejects(rotateMasterKey(h.database.db, config), /master key id abababababababab, which is not among the keys given/);
});

describe('a failed rotation changes nothing: servers restart with the key they had', () => {
  test('WSP_MASTER_KEY: a new key without the old one in WSP_MASTER_KEY_PREVIOUS', async () => {
    const { h, s, stored } = await setUp();
    const oldKey = h.config.masterKey!;
    const recorded = await recordedKeyId(h);
    const before = await h.database.db.selectFrom('secrets').select(['id', 'key_id', 'wrapped_key']).orderBy('id').execute();
    const newKey = randomBytes(32).toString('base64');
    await assert.rejects(
      rotateMasterKey(h.database.db, { masterKey: newKey, masterKeyPrevious: [], dataDir: h.config.dataDir }),
      new RegExp(`master key id ${idOf(oldKey)}, which is not among the keys given \\(${idOf(newKey)}\\).*nothing was changed`),
    );
    assert.equal(await recordedKeyId(h), recorded);
    assert.deepEqual(await h.database.db.selectFrom('secrets').select(['id', 'key_id', 'wrapped_key']).orderBy('id').execute(), before);
    // A server restarted with the old key starts and reads everything.
    const restarted = await another(h, { masterKey: oldKey, masterKeyPrevious: [] });
    await readThroughout(h, restarted, s, stored, Promise.resolve());
  });

  test('key file: a mistaken WSP_DATA_DIR creates no key file and records nothing', async () => {
    const { h, s, stored } = await setUp({ masterKey: undefined });
    const recorded = await recordedKeyId(h);
    const wrongDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-wrong-dir-'));
    closers.push(async () => fs.rmSync(wrongDir, { recursive: true, force: true }));
    await assert.rejects(
      rotateMasterKey(h.database.db, { masterKey: undefined, masterKeyPrevious: [], dataDir: wrongDir }),
      /which is not among the keys given \(none\) \(there is no .*master\.key: is WSP_DATA_DIR the servers' data directory\?\); nothing was changed/,
    );
    assert.deepEqual(fs.readdirSync(wrongDir), [], 'no key file was made');
    assert.equal(await recordedKeyId(h), recorded);
    // Through the command too (on PostgreSQL: with SQLite, another data directory is another database).
    if (h.database.engine === 'postgres') {
      const env = { ...h.dbEnv, WSP_DATA_DIR: wrongDir, WSP_MASTER_KEY: '', WSP_MASTER_KEY_PREVIOUS: '' };
      const out = new PassThrough();
      const err = new PassThrough();
      let printed = '';
      err.on('data', (c: Buffer) => (printed += c.toString()));
      assert.equal(await runAdmin(['rotate-master-key', '--json'], out, err, env), 1);
      assert.match(printed, /^error: this database uses master key id .* nothing was changed/);
      assert.deepEqual(fs.readdirSync(wrongDir), []);
      assert.equal(await recordedKeyId(h), recorded);
    }
    // The server restarts with its key file and reads everything.
    const restarted = await another(h, { masterKey: undefined, masterKeyPrevious: [] });
    await readThroughout(h, restarted, s, stored, Promise.resolve());
  });

  test('the recorded key counts too: with no secret yet, a key other than the recorded one is refused', async () => {
    const h = await createTestApp();
    closers.push(() => h.close());
    const recorded = await recordedKeyId(h);
    await assert.rejects(
      rotateMasterKey(h.database.db, { masterKey: randomBytes(32).toString('base64'), masterKeyPrevious: [], dataDir: h.config.dataDir }),
      new RegExp(`master key id ${recorded}, which is not among the keys given`),
    );
    assert.equal(await recordedKeyId(h), recorded);
    await another(h, { masterKey: h.config.masterKey, masterKeyPrevious: [] });
  });
});
