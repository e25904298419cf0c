import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, api, startServer, type ServerProcess } from '../helpers/processes.js';

/**
 * docs/spec-gaps.md, "Conventions" and §8: the guarantees hold across server instances because the store is the
 * database. On PostgreSQL two `wsp serve` processes share one database and requests are spread
 * over both; on SQLite (one process by design) the same requests go to a single process.
 */
let tdb: TestDatabase;
const servers: ServerProcess[] = [];
let boot: Record<string, string>;

before(async () => {
  tdb = await openTestDatabase();
  boot = await adminJson(['bootstrap'], tdb.env);
  const count = ENGINE === 'postgres' ? 2 : 1;
  servers.push(...(await Promise.all(Array.from({ length: count }, () => startServer(tdb.env, ['--no-worker'])))));
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await tdb.cleanup();
});

/** The i-th request's server: alternating when there are two. */
const base = (i: number) => servers[i % servers.length]!.url;
const owner = () => ({ credential: boot.session_token!, workspaceId: boot.workspace_id! });

test(`${ENGINE === 'postgres' ? 'two processes' : 'one process'}: 10 concurrent POSTs with one Idempotency-Key make exactly one token`, async () => {
  const key = `multi-${Date.now()}`;
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => api(base(i), 'POST', '/v1/api_tokens', { ...owner(), body: { name: key }, headers: { 'idempotency-key': key } })));
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
  for (const r of results.filter((x) => x.status !== 201)) {
    assert.equal(r.status, 409, r.text);
    assert.ok([7031, 7033].includes(r.body.errors[0].code), r.text);
    assert.ok(!r.text.includes('sk_svc_'));
  }
  const rows = await tdb.database.db.selectFrom('api_tokens').select('id').where('name', '=', key).execute();
  assert.equal(rows.length, 1);
  // Later retries, on either server, replay the 409 with the token's id.
  for (let i = 0; i < servers.length; i++) {
    const again = await api(base(i), 'POST', '/v1/api_tokens', { ...owner(), body: { name: key }, headers: { 'idempotency-key': key } });
    assert.equal(again.status, 409);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.errors[0].metadata.token_id, rows[0]!.id);
  }
});

test('a revocation on one server is seen by the other on the very next request', async () => {
  const created = await api(base(0), 'POST', '/v1/api_tokens', { ...owner(), body: { name: 'roaming' } });
  assert.equal(created.status, 201);
  const { id, token } = created.body as { id: string; token: string };
  assert.equal((await api(base(1), 'GET', '/v1/api_tokens', { credential: token })).status, 200);
  assert.equal((await api(base(0), 'DELETE', `/v1/api_tokens/${id}`, owner())).status, 204);
  const after = await api(base(1), 'GET', '/v1/api_tokens', { credential: token });
  assert.equal(after.status, 401);

  const { session_token } = await adminJson(['session', 'create', '--user', boot.user_id!], tdb.env);
  assert.equal((await api(base(0), 'GET', '/v1/me', { credential: session_token! })).status, 200, 'an admin command is seen at once');
  assert.equal((await api(base(1), 'DELETE', '/v1/sessions/current', { credential: session_token! })).status, 204);
  assert.equal((await api(base(0), 'GET', '/v1/me', { credential: session_token! })).status, 401);
});

test('20 concurrent If-Match writes spread over the servers: exactly one wins', async () => {
  const url = `/v1/workspaces/${boot.workspace_id}`;
  const current = await api(base(0), 'GET', url, owner());
  assert.equal(current.status, 200);
  const etag = current.body.etag as string;
  assert.equal(current.headers.get('etag'), `"${etag}"`);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api(base(i), 'PATCH', url, { ...owner(), body: { name: `racer ${i}` }, headers: { 'if-match': `"${etag}"` } })));
  const winners = results.filter((r) => r.status === 200);
  assert.equal(winners.length, 1, results.map((r) => r.status).join(','));
  const winner = winners[0]!.body as { etag: string; name: string };
  for (const r of results.filter((x) => x.status !== 200)) {
    assert.equal(r.status, 409, r.text);
    assert.equal(r.body.errors[0].code, 7030);
    assert.equal(r.body.errors[0].metadata.current_etag, winner.etag);
  }
  const now = await api(base(1), 'GET', url, owner());
  assert.equal(now.body.name, winner.name);
});
