import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { dumpAllRows } from '../helpers/db.js';
import { DeleteQueryNode, InsertQueryNode, PostgresDriver, UpdateQueryNode, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { GroupCommitSqliteDriver } from '../../src/db/sqlite-driver.js';
import { claimKey, completeKey, fingerprint, releaseKey } from '../../src/http/idempotency.js';
import { markWriteCommitted } from '../../src/db/write-transaction.js';
import { secretClient } from '../secrets/secret-client.js';

/** docs/spec-gaps.md, "Conventions" Idempotency-Key. */
const h = useTestApp();
const s = h.seeded;

let n = 0;
const uniqueKey = () => `key-${Date.now()}-${n++}`;
const createToken = (credential: string, key: string, body: object, workspaceId?: string) =>
  h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(credential, workspaceId, { 'idempotency-key': key }), payload: body });
const tokensNamed = async (name: string) => (await h.database.db.selectFrom('api_tokens').select('id').where('name', '=', name).execute()).length;
const etagOf = async (seed: Seed) => (await h.app.inject({ method: 'GET', url: `/v1/workspaces/${seed.workspaceId}`, headers: as(seed.owner.session, seed.workspaceId) })).json().etag as string;
const rename = (seed: Seed, key: string, ifMatch: string, name: string, credential = seed.owner.session) =>
  h.app.inject({
    method: 'PATCH',
    url: `/v1/workspaces/${seed.workspaceId}`,
    headers: as(credential, seed.workspaceId, { 'idempotency-key': key, 'if-match': ifMatch }),
    payload: { name },
  });

describe('replay', () => {
  test('the same request with the same key replays status, body and headers with Idempotent-Replayed: true', async () => {
    const key = uniqueKey();
    const etag = await etagOf(s);
    const first = await rename(s, key, etag, 'Replayed Inc');
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await rename(s, key, etag, 'Replayed Inc');
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(again.headers.etag, first.headers.etag);
    assert.match(String(again.headers['content-type']), /^application\/json/);
    // It was replayed, not redone: the etag is still the first write's.
    assert.equal(await etagOf(s), first.json().etag);
    // Another session of the same user is the same principal: replayed too.
    const { session_token } = await h.admin.createSession(s.owner.userId);
    const third = await rename(s, key, etag, 'Replayed Inc', session_token);
    assert.equal(third.headers['idempotent-replayed'], 'true');
  });

  test('a 204 and a 404 are replayed as they were', async () => {
    const made = (await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'to-revoke' } })).json();
    const del = (key: string, id: string) => h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${id}`, headers: as(s.owner.session, s.workspaceId, { 'idempotency-key': key }) });
    const key = uniqueKey();
    assert.equal((await del(key, made.id)).statusCode, 204);
    const again = await del(key, made.id);
    assert.equal(again.statusCode, 204, 'a retried revoke replays its 204 rather than a 404');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, '');
    const key2 = uniqueKey();
    const missing = await del(key2, 'tok_00000000000000000000000000');
    assert.equal(missing.statusCode, 404);
    const missing2 = await del(key2, 'tok_00000000000000000000000000');
    assert.equal(missing2.statusCode, 404);
    assert.equal(missing2.headers['idempotent-replayed'], 'true');
    assert.deepEqual(missing2.json(), missing.json());
  });

  test('the same key with another body, path or If-Match is 422 (7032) and changes nothing', async () => {
    const key = uniqueKey();
    const etag = await etagOf(s);
    assert.equal((await rename(s, key, etag, 'Fingerprinted')).statusCode, 200);
    const now = await etagOf(s);
    for (const res of [await rename(s, key, etag, 'Other name'), await rename(s, key, 'other-etag', 'Fingerprinted')]) {
      assert.equal(res.statusCode, 422);
      const e = firstError(res.json());
      assert.equal(e.code, 7032);
      assert.deepEqual(e.path, ['headers', 'idempotency-key']);
    }
    const tokenKey = uniqueKey();
    assert.equal((await createToken(s.owner.session, tokenKey, { name: 'fp-a' }, s.workspaceId)).statusCode, 201);
    const other = await createToken(s.owner.session, tokenKey, { name: 'fp-b' }, s.workspaceId);
    assert.equal(other.statusCode, 422);
    assert.equal(firstError(other.json()).code, 7032);
    assert.equal(await tokensNamed('fp-b'), 0);
    assert.equal(await etagOf(s), now);
  });
});

describe('scope: (workspace, acting principal, key)', () => {
  test('another user, or a workspace API token, with the same key is independent', async () => {
    const key = uniqueKey();
    const body = { name: `scoped-${key}` };
    assert.equal((await createToken(s.owner.session, key, body, s.workspaceId)).statusCode, 201);
    const byAdmin = await createToken(s.admin.session, key, body, s.workspaceId);
    assert.equal(byAdmin.statusCode, 201, 'another user: a new token, not a replay');
    assert.equal(byAdmin.headers['idempotent-replayed'], undefined);
    assert.equal(await tokensNamed(body.name), 2);
    // A workspace API token is a principal of its own (it may not create tokens: its 403 comes before any claim).
    const byToken = await createToken(s.apiToken, key, body);
    assert.equal(byToken.statusCode, 403);
    assert.equal((await createToken(s.owner.session, key, body, s.workspaceId)).headers['idempotent-replayed'], 'true');
  });

  test('the same user in another workspace is independent', async () => {
    const other = await h.seed('Second');
    await h.admin.addMember(other.workspaceId, s.owner.userId, 'owner');
    const key = uniqueKey();
    const body = { name: `ws-scoped-${key}` };
    assert.equal((await createToken(s.owner.session, key, body, s.workspaceId)).statusCode, 201);
    const there = await createToken(s.owner.session, key, body, other.workspaceId);
    assert.equal(there.statusCode, 201);
    assert.equal(there.headers['idempotent-replayed'], undefined);
  });
});

describe('what is not stored', () => {
  test('a 422 validation failure is not stored: a fixed retry with the same key succeeds', async () => {
    const key = uniqueKey();
    const now = Math.floor(h.clock.nowMs() / 1000);
    // A rule of the service (expires_at in the past) ...
    const past = await createToken(s.owner.session, key, { name: 'retry-me', expires_at: now - 1 }, s.workspaceId);
    assert.equal(past.statusCode, 422);
    // ... and a rule of the schema (name too long).
    const long = await createToken(s.owner.session, key, { name: 'x'.repeat(101) }, s.workspaceId);
    assert.equal(long.statusCode, 422);
    assert.equal(firstError(long.json()).code, 7003, 'not 7032: the failed attempt left no fingerprint');
    const fixed = await createToken(s.owner.session, key, { name: 'retry-me', expires_at: now + 3600 }, s.workspaceId);
    assert.equal(fixed.statusCode, 201);
    assert.equal(await tokensNamed('retry-me'), 1);
  });

  test('POST /v1/api_tokens is never replayed with its plaintext: 409 (7033) with metadata.token_id', async () => {
    const key = uniqueKey();
    const first = await createToken(s.owner.session, key, { name: 'secret-once' }, s.workspaceId);
    assert.equal(first.statusCode, 201);
    const { id, token } = first.json();
    const again = await createToken(s.owner.session, key, { name: 'secret-once' }, s.workspaceId);
    assert.equal(again.statusCode, 409);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const e = firstError(again.json());
    assert.equal(e.code, 7033);
    assert.deepEqual(e.metadata, { token_id: id });
    assert.ok(!again.body.includes('sk_svc_'));
    assert.ok(!again.body.includes(token.slice(7, 39)));
    assert.equal(await tokensNamed('secret-once'), 1);
    const dump = await dumpAllRows(h.database);
    assert.ok(!dump.includes(token.slice(7, 39)), 'the plaintext is not kept by the idempotency store');
  });

  test('no request body is kept: only a hash of the fingerprint', async () => {
    const key = uniqueKey();
    const marker = `body-marker-${key}`;
    assert.equal((await createToken(s.owner.session, key, { name: marker }, s.workspaceId)).statusCode, 201);
    const row = await h.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
    assert.match(row.fingerprint, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(row).includes(marker));
  });
});

describe('time', () => {
  test('a key is kept 24 h: replayed just before, a fresh request just after', async () => {
    const key = uniqueKey();
    const body = { name: `ttl-${key}` };
    assert.equal((await createToken(s.owner.session, key, body, s.workspaceId)).statusCode, 201);
    h.clock.advanceSeconds(24 * 3600 - 1);
    const before = await createToken(s.owner.session, key, body, s.workspaceId);
    assert.equal(before.statusCode, 409);
    assert.equal(firstError(before.json()).code, 7033);
    assert.equal(firstError(await (await createToken(s.owner.session, key, { name: 'other' }, s.workspaceId)).json()).code, 7032);
    h.clock.advanceSeconds(1);
    const after = await createToken(s.owner.session, key, { name: 'other' }, s.workspaceId);
    assert.equal(after.statusCode, 201, 'after 24 h the key is free again');
    assert.equal(await tokensNamed(body.name), 1);
  });

  test('while the first request is still running: 409 (7031); a claim abandoned for 120 s is taken over', async () => {
    // The first request is simulated by claiming the key exactly as the pipeline does, with the
    // same scope and fingerprint, and never completing it (as if it were still running).
    const key = uniqueKey();
    const body = { name: `inflight-${key}` };
    const scope = { workspaceId: s.workspaceId, principalId: s.owner.userId, key };
    const fpKey = await h.database.db.selectFrom('settings').select('value').where('key', '=', 'idempotency_hmac_key').executeTakeFirstOrThrow();
    const fp = fingerprint(Buffer.from(fpKey.value, 'base64'), 'POST', '/v1/api_tokens', body, undefined);
    assert.equal((await claimKey(h.database.db, h.clock, scope, fp)).kind, 'claimed');
    const busy = await createToken(s.owner.session, key, body, s.workspaceId);
    assert.equal(busy.statusCode, 409);
    const e = firstError(busy.json());
    assert.equal(e.code, 7031);
    assert.deepEqual(e.path, ['headers', 'idempotency-key']);
    assert.equal(await tokensNamed(body.name), 0);
    // Another body with the running key is still 422: a different request.
    assert.equal((await createToken(s.owner.session, key, { name: 'x' }, s.workspaceId)).statusCode, 422);
    h.clock.advanceSeconds(119);
    assert.equal((await createToken(s.owner.session, key, body, s.workspaceId)).statusCode, 409);
    h.clock.advanceSeconds(1);
    const taken = await createToken(s.owner.session, key, body, s.workspaceId);
    assert.equal(taken.statusCode, 201, taken.body);
    assert.equal(await tokensNamed(body.name), 1);
  });
});

describe('the same request is recognized however it is written', () => {
  test('a body with its keys in another order is the same request: replayed, not 422', async () => {
    const secret = await secretClient(h, as(s.apiToken)).createSecret();
    const key = uniqueKey();
    const send = (payload: string) =>
      h.app.inject({ method: 'POST', url: `/v1/secrets/${secret.id}/versions`, headers: as(s.apiToken, undefined, { 'idempotency-key': key, 'content-type': 'application/json' }), payload });
    const first = await send('{"data":"YWJj","comment":"one"}');
    assert.equal(first.statusCode, 201, first.body);
    const reordered = await send('{"comment":"one",\n "data":"YWJj"}');
    assert.equal(reordered.statusCode, 201, reordered.body);
    assert.equal(reordered.headers['idempotent-replayed'], 'true');
    assert.deepEqual(reordered.json(), first.json());
    // Another value is still another request.
    const other = await send('{"comment":"two","data":"YWJj"}');
    assert.equal(other.statusCode, 422);
    assert.equal(firstError(other.json()).code, 7032);
  });

  test('If-Match quoted, bare or weak is the same condition: replayed, not 422', async () => {
    const seed = await h.seed('IfMatchForms');
    const key = uniqueKey();
    const etag = await etagOf(seed);
    const first = await rename(seed, key, `"${etag}"`, 'Forms');
    assert.equal(first.statusCode, 200, first.body);
    for (const form of [etag, `W/"${etag}"`, ` "${etag}" `]) {
      const again = await rename(seed, key, form, 'Forms');
      assert.equal(again.statusCode, 200, `${form}: ${again.body}`);
      assert.equal(again.headers['idempotent-replayed'], 'true', form);
    }
    assert.equal(firstError((await rename(seed, key, '*', 'Forms')).json()).code, 7032, '* is another condition');
  });
});

describe('claims', () => {
  const claimFor = async (key: string) => {
    const scope = { workspaceId: s.workspaceId, principalId: s.owner.userId, key };
    const fp = fingerprint(Buffer.alloc(32, 7), 'POST', '/v1/somewhere', { a: 1 }, undefined);
    return { scope, fp };
  };
  const row = (key: string) => h.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).executeTakeFirst();

  test('a claim taken over after its lease cannot be completed or released by its first holder', async () => {
    const key = uniqueKey();
    const { scope, fp } = await claimFor(key);
    const first = await claimKey(h.database.db, h.clock, scope, fp);
    assert.equal(first.kind, 'claimed');
    h.clock.advanceSeconds(120);
    const second = await claimKey(h.database.db, h.clock, scope, fp);
    assert.equal(second.kind, 'claimed');
    assert.ok(first.kind === 'claimed' && second.kind === 'claimed' && first.token !== second.token);
    const firstClaim = { scope, token: (first as { token: string }).token };
    const secondClaim = { scope, token: (second as { token: string }).token };

    // The first request finishes late: its answer is not stored and it deletes nothing.
    assert.equal(await completeKey(h.database.db, firstClaim, 201, '{"late":true}', {}), false);
    assert.equal(await releaseKey(h.database.db, firstClaim), false);
    assert.equal((await row(key))?.state, 'running');
    // The second one's answer is the one kept, and replayed.
    assert.equal(await completeKey(h.database.db, secondClaim, 201, '{"second":true}', { 'content-type': 'application/json' }), true);
    assert.equal(await releaseKey(h.database.db, firstClaim), false);
    const replay = await claimKey(h.database.db, h.clock, scope, fp);
    assert.deepEqual(replay, { kind: 'replay', status: 201, body: '{"second":true}', headers: { 'content-type': 'application/json' } });
  });

  test('a release by the holder frees the key; a done key is never released', async () => {
    const key = uniqueKey();
    const { scope, fp } = await claimFor(key);
    const claimed = (await claimKey(h.database.db, h.clock, scope, fp)) as { kind: 'claimed'; token: string };
    assert.equal(await releaseKey(h.database.db, { scope, token: claimed.token }), true);
    assert.equal(await row(key), undefined);
    const again = (await claimKey(h.database.db, h.clock, scope, fp)) as { kind: 'claimed'; token: string };
    assert.equal(again.kind, 'claimed');
    assert.equal(await completeKey(h.database.db, { scope, token: again.token }, 204, '', {}), true);
    assert.equal(await releaseKey(h.database.db, { scope, token: again.token }), false);
    assert.equal((await row(key))?.state, 'done');
  });
});

describe('5xx answers are not stored', () => {
  test('a 500 (a tampered data key) is not replayed: once repaired, a retry with the same key runs and answers 201', async () => {
    const api = secretClient(h, as(s.apiToken));
    const secret = await api.createSecret();
    const { wrapped_key } = await h.database.db.selectFrom('secrets').select('wrapped_key').where('id', '=', secret.id).executeTakeFirstOrThrow();
    const flipped = Buffer.from(wrapped_key, 'base64');
    flipped[20] = flipped[20]! ^ 0xff;
    await h.database.db
      .updateTable('secrets')
      .set({ wrapped_key: flipped.toString('base64') })
      .where('id', '=', secret.id)
      .execute();
    const key = uniqueKey();
    const add = () => h.app.inject({ method: 'POST', url: `/v1/secrets/${secret.id}/versions`, headers: as(s.apiToken, undefined, { 'idempotency-key': key }), payload: { data: 'YWJj' } });
    const failed = await add();
    assert.equal(failed.statusCode, 500, failed.body);
    assert.equal(firstError(failed.json()).code, 7203);
    assert.equal(await h.database.db.selectFrom('idempotency_keys').select('key').where('key', '=', key).executeTakeFirst(), undefined, 'nothing kept');

    await h.database.db.updateTable('secrets').set({ wrapped_key }).where('id', '=', secret.id).execute();
    const retried = await add();
    assert.equal(retried.statusCode, 201, retried.body);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    const replayed = await add();
    assert.equal(replayed.statusCode, 201);
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replayed.json(), retried.json());
  });
});

describe('concurrency', () => {
  test('10 concurrent POSTs with one key: exactly one token, the others replay (409 7033) or are in flight (409 7031)', async () => {
    const key = uniqueKey();
    const body = { name: `race-${key}` };
    const results = await Promise.all(Array.from({ length: 10 }, () => createToken(s.owner.session, key, body, s.workspaceId)));
    const statuses = results.map((r) => r.statusCode);
    assert.equal(statuses.filter((c) => c === 201).length, 1, statuses.join(','));
    for (const r of results.filter((x) => x.statusCode !== 201)) {
      assert.equal(r.statusCode, 409, r.body);
      assert.ok([7031, 7033].includes(firstError(r.json()).code), r.body);
      assert.ok(!r.body.includes('sk_svc_'));
    }
    assert.equal(await tokensNamed(body.name), 1);
  });

  test('10 concurrent PATCHes with one key and one If-Match: one write; the others replay it (200) or are in flight (409 7031)', async () => {
    const key = uniqueKey();
    const etag = await etagOf(s);
    const results = await Promise.all(Array.from({ length: 10 }, () => rename(s, key, etag, 'Concurrent')));
    const fresh = results.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
    assert.equal(fresh.length, 1, results.map((r) => `${r.statusCode}${r.headers['idempotent-replayed'] ? 'R' : ''}`).join(','));
    for (const r of results) {
      if (r.statusCode === 200) assert.deepEqual(r.json(), fresh[0]!.json());
      else {
        assert.equal(r.statusCode, 409);
        assert.equal(firstError(r.json()).code, 7031);
      }
    }
    assert.equal(await etagOf(s), fresh[0]!.json().etag, 'exactly one write happened');
  });
});

test('GET ignores Idempotency-Key', async () => {
  const key = uniqueKey();
  for (let i = 0; i < 2; i++) {
    const res = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId, { 'idempotency-key': key }) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['idempotent-replayed'], undefined);
  }
});

describe('a write that committed while its answer was lost', () => {
  /**
   * The answer to COMMIT lost after the database committed (a connection cut, a restart between
   * the two): the client is told 503 (7054) for a write that took effect. The key was marked in
   * the write's own transaction, so a retry with it is never carried out again (test/faults/
   * database-network.test.ts cuts real connections; here the cut is placed exactly).
   */
  async function withCommitAnswerLost<T>(fn: () => Promise<T>): Promise<T> {
    const drivers = [PostgresDriver.prototype, GroupCommitSqliteDriver.prototype] as unknown as { commitTransaction: (...a: unknown[]) => Promise<void> }[];
    const originals = drivers.map((d) => d.commitTransaction);
    let armed = true;
    drivers.forEach((d, i) => {
      d.commitTransaction = async function (...args: unknown[]) {
        await originals[i]!.apply(this, args);
        if (!armed) return;
        armed = false;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
      };
    });
    try {
      return await fn();
    } finally {
      drivers.forEach((d, i) => (d.commitTransaction = originals[i]!));
    }
  }

  test('a retry with its key is answered 409 (7055), never made again; without the mark it would have been', async () => {
    const key = uniqueKey();
    const name = `lost-answer-${key}`;
    const first = await withCommitAnswerLost(() => createToken(s.owner.session, key, { name }, s.workspaceId));
    assert.equal(first.statusCode, 503, first.body);
    assert.equal(firstError(first.json()).code, 7054);
    assert.equal(await tokensNamed(name), 1, 'the write took effect');
    for (let i = 0; i < 2; i++) {
      const retry = await createToken(s.owner.session, key, { name }, s.workspaceId);
      assert.equal(retry.statusCode, 409, retry.body);
      assert.equal(firstError(retry.json()).code, 7055);
      assert.deepEqual(firstError(retry.json()).path, ['headers', 'idempotency-key']);
    }
    assert.equal(await tokensNamed(name), 1, 'retries made nothing');
    // A write that failed before committing is still released: its retry is carried out.
    const other = uniqueKey();
    const failed = await createToken(s.owner.session, other, { name: '' }, s.workspaceId);
    assert.equal(failed.statusCode, 422);
    assert.equal((await createToken(s.owner.session, other, { name: `after-${other}` }, s.workspaceId)).statusCode, 201);
  });

  test('the mark lives and dies with its write: a transaction rolled back leaves the key free', async () => {
    const claim = { scope: { workspaceId: s.workspaceId, principalId: s.owner.userId, key: uniqueKey() }, token: 'x' };
    const outcome = await claimKey(h.database.db, h.clock, claim.scope, 'fp');
    assert.equal(outcome.kind, 'claimed');
    const held = { scope: claim.scope, token: (outcome as { token: string }).token };
    await h.database.db
      .transaction()
      .execute(async (trx) => {
        await markWriteCommitted(trx, held);
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    assert.equal(await releaseKey(h.database.db, held), true);
    assert.equal((await claimKey(h.database.db, h.clock, claim.scope, 'fp')).kind, 'claimed', 'released: the next request may run');
  });
});

describe('a full disk at the end of a claim', () => {
  /** The disk, full for the statements `full` names: they fail as SQLite's SQLITE_FULL does. */
  const disk = { full: (_node: RootOperationNode) => false };
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      if (disk.full(node)) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  const names = (node: RootOperationNode) => JSON.stringify(node);
  const f = useTestApp({ plugins: [plugin] });
  const fs = f.seeded;
  const createSecret = (key: string, name: string) =>
    f.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(fs.owner.session, fs.workspaceId, { 'idempotency-key': key }), payload: { name } });
  const untilAnswered = async (key: string, name: string, status: number) => {
    for (let waited = 0; ; waited += 100) {
      const res = await createSecret(key, name);
      if (res.statusCode === status) return res;
      assert.ok(waited < 10_000, `still ${res.statusCode} ${res.body}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  test('a write that committed is answered as it was (201), never 500; its answer is kept once the disk has room, and replayed', async () => {
    const key = uniqueKey();
    disk.full = (node) => UpdateQueryNode.is(node) && names(node).includes('"response_body"');
    const first = await createSecret(key, 'full-at-completion');
    assert.equal(first.statusCode, 201, first.body);
    // Until the answer is kept, the key is taken: a retry is not carried out again.
    const retry = await createSecret(key, 'full-at-completion');
    assert.equal(retry.statusCode, 409, retry.body);
    disk.full = () => false;
    const replayed = await untilAnswered(key, 'full-at-completion', 201);
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.equal(replayed.json().id, first.json().id);
    assert.equal((await f.database.db.selectFrom('secrets').select('id').where('name', '=', 'full-at-completion').execute()).length, 1);
  });

  test('a write refused for the full disk is 507 (7057), never 500, though its claim cannot be released yet; once there is room a retry runs', async () => {
    const key = uniqueKey();
    disk.full = (node) => (InsertQueryNode.is(node) && names(node).includes('"secrets"')) || (DeleteQueryNode.is(node) && names(node).includes('"idempotency_keys"'));
    const first = await createSecret(key, 'full-at-write');
    assert.equal(first.statusCode, 507, first.body);
    assert.equal(firstError(first.json()).code, 7057);
    disk.full = () => false;
    const created = await untilAnswered(key, 'full-at-write', 201);
    assert.equal(created.headers['idempotent-replayed'], undefined);
  });
});
