import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, api, startServer, type ServerProcess } from '../helpers/processes.js';

/**
 * The foundation issue's "done when", as a user does it: `wsp admin bootstrap --json`, then
 * `wsp serve`, then plain HTTP with the printed credentials: create, list and revoke tokens,
 * 403 without Service-Context for the session token, 401 with the revoked token.
 */
let tdb: TestDatabase;
let server: ServerProcess | undefined;
before(async () => {
  tdb = await openTestDatabase();
});
after(async () => {
  if (server) await server.stop('SIGKILL');
  await tdb.cleanup();
});

test('bootstrap, serve, and the token life cycle over real HTTP', async () => {
  const boot = await adminJson(['bootstrap'], tdb.env);
  const { workspace_id: ws, session_token: session, api_token: apiToken } = boot;
  server = await startServer(tdb.env);
  const base = server.url;
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);

  // System routes.
  assert.equal((await api(base, 'GET', '/healthz')).status, 200);
  assert.deepEqual((await api(base, 'GET', '/readyz')).body, { status: 'ready' });
  const doc = await api(base, 'GET', '/v1/openapi.json');
  assert.equal(doc.body.info.version, '1.0.0');

  // The README's two calls.
  const listByToken = await api(base, 'GET', '/v1/api_tokens', { credential: apiToken! });
  assert.equal(listByToken.status, 200, listByToken.text);
  assert.equal(listByToken.body.data.length, 1);
  const listBySession = await api(base, 'GET', '/v1/api_tokens', { credential: session!, workspaceId: ws! });
  assert.equal(listBySession.status, 200);

  // The session token is broad: 403 without Service-Context.
  const noContext = await api(base, 'GET', '/v1/api_tokens', { credential: session! });
  assert.equal(noContext.status, 403);
  assert.equal(noContext.body.errors[0].code, 7021);

  // Create, list, use, revoke.
  const created = await api(base, 'POST', '/v1/api_tokens', { credential: session!, workspaceId: ws!, body: { name: 'ci' }, headers: { 'idempotency-key': 'walk-1' } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(Object.keys(created.body).sort(), ['expires_at', 'id', 'name', 'token']);
  const { id, token } = created.body as { id: string; token: string };
  assert.match(created.headers.get('x-request-id') ?? '', /.+/);
  const replay = await api(base, 'POST', '/v1/api_tokens', { credential: session!, workspaceId: ws!, body: { name: 'ci' }, headers: { 'idempotency-key': 'walk-1' } });
  assert.equal(replay.status, 409);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.body.errors[0].metadata.token_id, id);

  const list = await api(base, 'GET', '/v1/api_tokens', { credential: token });
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.data.map((t: { name: string }) => t.name),
    ['ci', 'bootstrap'],
  );
  assert.equal(list.body.data[0].prefix, token.slice(0, 12));
  assert.ok(!list.text.includes(token));

  const byToken = await api(base, 'POST', '/v1/api_tokens', { credential: apiToken!, body: { name: 'nope' } });
  assert.equal(byToken.status, 403, 'a workspace API token cannot create tokens');

  const revoked = await api(base, 'DELETE', `/v1/api_tokens/${id}`, { credential: session!, workspaceId: ws! });
  assert.equal(revoked.status, 204);
  assert.equal(revoked.text, '');
  const after = await api(base, 'GET', '/v1/api_tokens', { credential: token });
  assert.equal(after.status, 401);
  assert.equal(after.body.errors[0].code, 7010);
  assert.equal(after.headers.get('www-authenticate'), 'Bearer');

  // The session can revoke itself.
  assert.equal((await api(base, 'DELETE', '/v1/sessions/current', { credential: session! })).status, 204);
  assert.equal((await api(base, 'GET', '/v1/me', { credential: session! })).status, 401);

  // The server logged JSON lines with request ids and no credential.
  const logs = server.output.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(logs.some((l) => l.msg === 'request' && typeof l.reqId === 'string'));
  for (const secret of [session!, apiToken!, token]) assert.ok(!server.output.some((l) => l.includes(secret)), 'a credential in the server log');

  assert.equal(await server.stop('SIGTERM'), 0, 'SIGTERM: a clean exit');
  server = undefined;
});
