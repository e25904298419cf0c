import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { issueSetupCode } from '../../src/accounts/setup-code.js';

const PASSWORD = 'a long enough password';

const h = useTestApp();
const s = h.seeded;

let n = 0;
const email = () => `invitee-${++n}-${Date.now()}@example.com`;

const invite = (cred: string, body: Record<string, unknown>, workspace = s.workspaceId) =>
  h.app.inject({ method: 'POST', url: `/v1/workspaces/${workspace}/invitations`, headers: as(cred, workspace), payload: body });
const accept = (payload: Record<string, unknown>, headers: Record<string, string> = {}) => h.app.inject({ method: 'POST', url: '/v1/invitations:accept', payload, headers });
const secretOf = (url: string) => url.slice(url.indexOf('#') + 1);

describe('invitations', () => {
  test('an owner or admin invites by email: the link is shown once, under WSP_PUBLIC_URL/console/invite#; a member cannot; only an owner invites an owner', async () => {
    const res = await invite(s.admin.session, { email: 'New.Person@Example.com', role: 'member' });
    assert.equal(res.statusCode, 201, res.body);
    const inv = res.json();
    assert.deepEqual(Object.keys(inv).sort(), ['email', 'expires_at', 'id', 'role', 'url']);
    assert.match(inv.id, /^inv_/);
    assert.match(inv.url, /^http:\/\/localhost:8080\/console\/invite#inv_[A-Za-z0-9_-]{43}$/);
    assert.equal(inv.expires_at - Math.floor(h.clock.nowMs() / 1000), 7 * 24 * 3600);
    const listed = (await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}/invitations`, headers: as(s.owner.session, s.workspaceId) })).json().data;
    const row = listed.find((i: { id: string }) => i.id === inv.id);
    assert.deepEqual(Object.keys(row).sort(), ['created_at', 'created_by', 'email', 'expires_at', 'id', 'role']);
    assert.ok(!JSON.stringify(listed).includes(secretOf(inv.url)), 'the secret is never listed');
    assert.equal(firstError((await invite(s.member.session, { email: email(), role: 'member' })).json()).code, 7023);
    assert.equal(firstError((await invite(s.admin.session, { email: email(), role: 'owner' })).json()).code, 7049);
    assert.equal((await invite(s.owner.session, { email: email(), role: 'owner' })).statusCode, 201);
    for (const body of [{ email: 'nope', role: 'member' }, { email: email(), role: 'boss' }, { role: 'member' }]) assert.equal((await invite(s.owner.session, body)).statusCode, 422);
  });

  test('a newcomer accepts with a name and password: a user with that email, a member with the role, a cookie session; the password then signs in', async () => {
    const address = email();
    const inv = (await invite(s.admin.session, { email: address, role: 'admin' })).json();
    const missing = await accept({ token: secretOf(inv.url), password: PASSWORD });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(firstError(missing.json()).path, ['body', 'name']);
    assert.equal((await accept({ token: secretOf(inv.url), name: 'New', password: 'short' })).statusCode, 422, 'a password of 12 characters at least');

    const res = await accept({ token: secretOf(inv.url), name: 'New Person', password: PASSWORD });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.workspace_id, s.workspaceId);
    assert.equal(body.role, 'admin');
    assert.match(String(res.headers['set-cookie']), /^wsp_session=[A-Za-z0-9]{32}; Path=\/; HttpOnly; SameSite=Lax/);
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie, 'service-context': s.workspaceId } })).json();
    assert.deepEqual([me.user.id, me.user.email, me.role], [body.user_id, address, 'admin']);
    const signIn = await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: address, password: PASSWORD } });
    assert.equal(signIn.statusCode, 201);
    const again = await accept({ token: secretOf(inv.url), name: 'Again', password: PASSWORD });
    assert.equal(again.statusCode, 410);
    assert.equal(firstError(again.json()).code, 7046);
  });

  test('a signed-in user accepts with the token alone and joins; a member already keeps their role; an API token cannot accept', async () => {
    const other = await h.seed('Other');
    const inv = (await invite(s.owner.session, { email: email(), role: 'member' })).json();
    const res = await accept({ token: secretOf(inv.url) }, as(other.owner.session));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { workspace_id: s.workspaceId, user_id: other.owner.userId, role: 'member', session_id: null });
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(other.owner.session, s.workspaceId) })).json().role, 'member');

    const second = (await invite(s.owner.session, { email: email(), role: 'member' })).json();
    assert.equal((await accept({ token: secretOf(second.url) }, as(s.admin.session))).json().role, 'admin', 'already an admin: stays one');
    const third = (await invite(s.owner.session, { email: email(), role: 'member' })).json();
    const byToken = await accept({ token: secretOf(third.url) }, as(s.apiToken));
    assert.equal(byToken.statusCode, 403);
    assert.equal(firstError(byToken.json()).code, 7024);
  });

  test('revoked or expired: 410; an unknown secret 404; a newcomer whose email is taken 409 (7047)', async () => {
    const revoked = (await invite(s.admin.session, { email: email(), role: 'member' })).json();
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/invitations/${revoked.id}`, headers: as(s.admin.session, s.workspaceId) });
    assert.equal(del.statusCode, 204);
    assert.equal((await h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/invitations/${revoked.id}`, headers: as(s.admin.session, s.workspaceId) })).statusCode, 404);
    assert.equal((await accept({ token: secretOf(revoked.url), name: 'x', password: PASSWORD })).statusCode, 410);

    const expiring = (await invite(s.admin.session, { email: email(), role: 'member' })).json();
    h.clock.advanceSeconds(7 * 24 * 3600);
    assert.equal((await accept({ token: secretOf(expiring.url), name: 'x', password: PASSWORD })).statusCode, 410);
    const pending = (await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}/invitations`, headers: as(s.owner.session, s.workspaceId) })).json().data;
    assert.ok(!pending.some((i: { id: string }) => i.id === expiring.id || i.id === revoked.id), 'neither is pending');

    assert.equal((await accept({ token: 'inv_unknown', name: 'x', password: PASSWORD })).statusCode, 404);

    const taken = `taken-${Date.now()}@example.com`;
    await h.admin.createUser({ name: 'has it', email: taken });
    const inv = (await invite(s.admin.session, { email: taken.toUpperCase(), role: 'member' })).json();
    const clash = await accept({ token: secretOf(inv.url), name: 'x', password: PASSWORD });
    assert.equal(clash.statusCode, 409);
    assert.equal(firstError(clash.json()).code, 7047);
    assert.equal((await accept({ token: secretOf(inv.url), name: 'x', password: PASSWORD })).statusCode, 409, 'still usable by its rightful user');
  });

  test("another workspace's invitations are not found", async () => {
    const other = await h.seed('Elsewhere');
    const inv = (await invite(other.owner.session, { email: email(), role: 'member' }, other.workspaceId)).json();
    const res = await h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/invitations/${inv.id}`, headers: as(s.owner.session, s.workspaceId) });
    assert.equal(res.statusCode, 404);
    const list = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${other.workspaceId}/invitations`, headers: as(s.owner.session, s.workspaceId) });
    assert.equal(list.statusCode, 404);
  });
});

describe('first run: POST /v1/setup', () => {
  test('GET /v1/setup says the first run is to do; while there is no user, the setup code makes the first owner, a workspace and a cookie session; a wrong code is 403; then 410', async () => {
    const fresh = await createTestApp();
    try {
      // GET /v1/setup tells a sign-in page that the first run is still to do, with no credential.
      const state = async () => {
        const res = await fresh.app.inject({ method: 'GET', url: '/v1/setup' });
        assert.equal(res.statusCode, 200, res.body);
        return res.json<{ required: boolean }>();
      };
      assert.deepEqual(await state(), { required: true });
      const code = await issueSetupCode(fresh.database.db);
      assert.match(code!, /^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
      const body = { code, email: 'first@example.com', name: 'First', password: PASSWORD, workspace_name: 'Acme' };
      const wrong = await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: { ...body, code: 'AAAA-BBBB-CCCC' } });
      assert.equal(wrong.statusCode, 403);
      const res = await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: body });
      assert.equal(res.statusCode, 201, res.body);
      const cookie = String(res.headers['set-cookie']).split(';')[0]!;
      const me = (await fresh.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie, 'service-context': res.json().workspace_id } })).json();
      assert.deepEqual([me.user.email, me.workspace.name, me.role], ['first@example.com', 'Acme', 'owner']);
      const again = await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: body });
      assert.equal(again.statusCode, 410);
      assert.equal(firstError(again.json()).code, 7048);
      assert.equal(await issueSetupCode(fresh.database.db), null, 'no code once a user exists');
      assert.deepEqual(await state(), { required: false });
    } finally {
      await fresh.close();
    }
  });

  test('every code issued while there is no user is valid: several servers starting on one database each log one, and any of them sets up', async () => {
    const fresh = await createTestApp();
    try {
      // Three starts at once (compose.yaml's servers and a restart): none overwrites another.
      const codes = await Promise.all([1, 2, 3].map(() => issueSetupCode(fresh.database.db)));
      assert.equal(new Set(codes).size, 3);
      const body = { email: 'first@example.com', name: 'First', password: PASSWORD, workspace_name: 'Acme' };
      assert.equal((await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: { ...body, code: 'AAAA-BBBB-CCCC' } })).statusCode, 403);
      // A prefix of a code's key is not a code.
      assert.equal((await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: { ...body, code: codes[0]!.slice(0, 9) } })).statusCode, 403);
      const res = await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: { ...body, code: codes[0] } });
      assert.equal(res.statusCode, 201, res.body);
      // Done once: another of the codes finds the setup made.
      const other = await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: { ...body, email: 'second@example.com', code: codes[2] } });
      assert.equal(other.statusCode, 410);
    } finally {
      await fresh.close();
    }
  });
});
