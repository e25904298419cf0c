import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError, userWithPassword } from '../helpers/harness.js';
import { useTestApp, type Body } from '../helpers/test-app.js';

/**
 * GET /v1/me/events (issue 50, point 8): each person's own security log. Sign-ins belong to no
 * workspace, so a workspace's audit log never shows them and its filter does not offer them.
 */
const PASSWORD = 'a long enough password';

const h = useTestApp();
const s = h.seeded;

const mine = async (credential: string, query = '') => {
  const res = await h.app.inject({ method: 'GET', url: `/v1/me/events${query}`, headers: as(credential) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Body<'/v1/me/events', 'get'>>();
};
const signIn = (email: string, password: string, userAgent = 'test-agent/1') =>
  h.app.inject({ method: 'POST', url: '/v1/sessions', headers: { 'user-agent': userAgent }, payload: { email, password } });

test("a person's sign-ins, the failed ones naming their account and their sessions ended, newest first, with IP and user agent; nobody else's", async () => {
  const ada = await userWithPassword(h, PASSWORD, { workspaceId: s.workspaceId, role: 'member' });
  const bob = await userWithPassword(h, PASSWORD, { workspaceId: s.workspaceId, role: 'member' });
  assert.equal((await signIn(ada.email, 'the wrong password, typed', 'curl/8')).statusCode, 401);
  const session = (await signIn(ada.email, PASSWORD, 'Firefox/130')).json().token as string;
  assert.equal((await signIn(bob.email, PASSWORD)).statusCode, 201);
  assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(session) })).statusCode, 204);
  const other = (await signIn(ada.email, PASSWORD)).json().token as string;

  const page = await mine(other);
  assert.deepEqual(
    page.data.map((e) => e.type),
    ['session.created', 'session.revoked', 'session.created', 'session.failed'],
  );
  for (const e of page.data) {
    assert.equal(e.workspace_id, null);
    assert.ok(e.actor.id === ada.userId || e.resource.id === ada.userId, JSON.stringify(e));
  }
  const failed = page.data[3]!;
  assert.equal(failed.actor.kind, 'anonymous');
  assert.equal(failed.user_agent, 'curl/8');
  assert.equal(failed.data.email, ada.email);
  assert.equal(page.data[2]!.user_agent, 'Firefox/130');
  assert.ok(page.data.every((e) => typeof e.ip === 'string'));

  // Bob sees only his.
  const bobs = (await mine((await signIn(bob.email, PASSWORD)).json().token)).data;
  assert.ok(bobs.length >= 2 && bobs.every((e) => e.actor.id === bob.userId || e.resource.id === bob.userId));
});

test('filters by type or resource, by time; pages with a cursor bound to the filters', async () => {
  const ada = await userWithPassword(h, PASSWORD);
  for (let i = 0; i < 3; i++) assert.equal((await signIn(ada.email, PASSWORD)).statusCode, 201);
  h.clock.advanceSeconds(3600);
  assert.equal((await signIn(ada.email, 'wrong, wrong, wrong')).statusCode, 401);
  const token = (await signIn(ada.email, PASSWORD)).json().token as string;

  assert.deepEqual(
    (await mine(token, '?type=session.failed')).data.map((e) => e.type),
    ['session.failed'],
  );
  assert.equal((await mine(token, '?type=session.*')).data.length, 5);
  const recent = (await mine(token, `?since=${Math.floor(h.clock.nowMs() / 1000) - 60}`)).data;
  assert.deepEqual(
    recent.map((e) => e.type),
    ['session.created', 'session.failed'],
  );
  const older = (await mine(token, `?until=${Math.floor(h.clock.nowMs() / 1000) - 60}`)).data;
  assert.equal(older.length, 3);

  const first = await mine(token, '?limit=2');
  assert.equal(first.has_more, true);
  const second = await mine(token, `?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
  assert.equal(second.data.length, 2);
  assert.ok(second.data[0]!.id < first.data[1]!.id);
  const mixed = await h.app.inject({ method: 'GET', url: `/v1/me/events?limit=2&type=session.created&cursor=${encodeURIComponent(first.next_cursor!)}`, headers: as(token) });
  assert.equal(mixed.statusCode, 422);
});

test('a workspace API token is 403 (7024); no credential 401; a filter of workspace events is 422', async () => {
  const token = await h.app.inject({ method: 'GET', url: '/v1/me/events', headers: as(s.apiToken) });
  assert.equal(token.statusCode, 403);
  assert.equal(firstError(token.json()).code, 7024);
  assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me/events' })).statusCode, 401);
  const wrong = await h.app.inject({ method: 'GET', url: '/v1/me/events?type=secret.created', headers: as(s.owner.session) });
  assert.equal(wrong.statusCode, 422);
});

test("the workspace's audit log offers no filter that can match nothing: sign-in types are refused there (422) and listed in /v1/me/events", async () => {
  for (const type of ['session.created', 'session.*', 'device_authorization.approved', 'user.email_verified']) {
    const res = await h.app.inject({ method: 'GET', url: `/v1/audit_events?type=${type}`, headers: as(s.owner.session, s.workspaceId) });
    assert.equal(res.statusCode, 422, type);
    assert.deepEqual(firstError(res.json()).path, ['query', 'type']);
  }
  const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  const param = (op: { parameters: { name: string; schema: { enum: string[] } }[] }) => op.parameters.find((p) => p.name === 'type')!.schema.enum;
  const audit = param(doc.paths['/v1/audit_events'].get);
  const me = param(doc.paths['/v1/me/events'].get);
  assert.ok(!audit.some((t: string) => me.includes(t)), 'the two filters share no type');
  assert.ok(me.includes('session.created') && me.includes('device_authorization.*'));
  assert.ok(audit.includes('secret.created') && !audit.includes('session.*'));
});
