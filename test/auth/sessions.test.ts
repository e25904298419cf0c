import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/** docs/spec-gaps.md, "Credentials and tokens": session tokens idle out after 30 days, are extended on use, and can be revoked. */
const h = useTestApp();
const s = h.seeded;

const DAY = 24 * 3600;
const me = (session: string) => h.app.inject({ method: 'GET', url: '/v1/me', headers: as(session) });
const now = () => Math.floor(h.clock.nowMs() / 1000);
async function sessionRow(userId: string) {
  return h.database.db.selectFrom('sessions').select(['id', 'last_used_at', 'expires_at']).where('user_id', '=', userId).executeTakeFirstOrThrow();
}
async function freshUser() {
  const { user_id } = await h.admin.createUser({ name: 'sess' });
  await h.admin.addMember(s.workspaceId, user_id, 'member');
  const { session_token } = await h.admin.createSession(user_id);
  return { userId: user_id, token: session_token };
}

test('a session token is 32 characters of [A-Za-z0-9] and acts as its user', async () => {
  const u = await freshUser();
  assert.match(u.token, /^[A-Za-z0-9]{32}$/);
  const res = await me(u.token);
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().credential.kind, 'session');
  assert.equal(res.json().user.id, u.userId);
});

test('an unused session expires after 30 days of idleness (401), not a second before', async () => {
  const u = await freshUser();
  h.clock.advanceSeconds(30 * DAY - 1);
  // Checked without using it: a use would extend it.
  const row = await sessionRow(u.userId);
  assert.equal(Number(row.expires_at) - now(), 1);
  h.clock.advanceSeconds(1);
  const res = await me(u.token);
  assert.equal(res.statusCode, 401);
  assert.equal(firstError(res.json()).code, 7010);
});

test('use extends it: used after 29 days, it is still valid 29 days later, and expires 30 days after the last use', async () => {
  const u = await freshUser();
  h.clock.advanceSeconds(29 * DAY);
  assert.equal((await me(u.token)).statusCode, 200);
  h.clock.advanceSeconds(29 * DAY);
  assert.equal((await me(u.token)).statusCode, 200, '58 days after creation, 29 after the last use');
  h.clock.advanceSeconds(30 * DAY);
  assert.equal((await me(u.token)).statusCode, 401, '30 idle days after the last use');
});

test('last-use writes are throttled to once a minute (read from the database rows)', async () => {
  const u = await freshUser();
  const created = await sessionRow(u.userId);
  const t0 = now();
  assert.equal(Number(created.last_used_at), t0);
  assert.equal(Number(created.expires_at), t0 + 30 * DAY);

  h.clock.advanceSeconds(30);
  assert.equal((await me(u.token)).statusCode, 200);
  assert.deepEqual(await sessionRow(u.userId), created, 'no write 30 s after the last one');

  h.clock.advanceSeconds(29);
  assert.equal((await me(u.token)).statusCode, 200);
  assert.deepEqual(await sessionRow(u.userId), created, 'no write 59 s after the last one');

  h.clock.advanceSeconds(1);
  assert.equal((await me(u.token)).statusCode, 200);
  const touched = await sessionRow(u.userId);
  assert.equal(Number(touched.last_used_at), t0 + 60);
  assert.equal(Number(touched.expires_at), t0 + 60 + 30 * DAY);

  // Many uses within the next minute: still exactly that row.
  for (let i = 0; i < 5; i++) {
    h.clock.advanceSeconds(10);
    assert.equal((await me(u.token)).statusCode, 200);
  }
  assert.deepEqual(await sessionRow(u.userId), touched);
});

test("DELETE /v1/sessions/current revokes the calling session at once; the user's other sessions live on", async () => {
  const u = await freshUser();
  const { session_token: other } = await h.admin.createSession(u.userId);
  const del = await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(u.token) });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  const after = await me(u.token);
  assert.equal(after.statusCode, 401);
  assert.equal(firstError(after.json()).code, 7010);
  assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(u.token) })).statusCode, 401);
  assert.equal((await me(other)).statusCode, 200);
  const rows = await h.database.db.selectFrom('sessions').select('id').where('user_id', '=', u.userId).execute();
  assert.equal(rows.length, 1, 'the revoked session is deleted');
});

test('DELETE /v1/sessions/current with a workspace API token is 403 and revokes nothing', async () => {
  const res = await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(s.apiToken) });
  assert.equal(res.statusCode, 403);
  assert.equal((await me(s.apiToken)).statusCode, 200);
  // A session with a Service-Context of its workspace is fine; a malformed one is 422.
  const u = await freshUser();
  const bad = await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(u.token, 'not-a-ws') });
  assert.equal(bad.statusCode, 422);
  assert.deepEqual(firstError(bad.json()).path, ['headers', 'service-context']);
  assert.equal((await me(u.token)).statusCode, 200);
});

test('a session of a deleted user stops working', async () => {
  const u = await freshUser();
  await h.database.db.deleteFrom('memberships').where('user_id', '=', u.userId).execute();
  await h.database.db.deleteFrom('users').where('id', '=', u.userId).execute();
  assert.equal((await me(u.token)).statusCode, 401);
});
