import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { TOKEN_SCOPES } from '../../src/auth/scopes.js';

/** docs/spec-gaps.md, "Token scopes"'s token scopes: given at creation, shown in lists, enforced (every operation: test/security/tenant-isolation.test.ts). */
const h = useTestApp();
const s = h.seeded;

const owner = () => as(s.owner.session, s.workspaceId);
const createToken = (body: object) => h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: owner(), payload: { name: 'scoped', ...body } });
async function tokenWith(scopes?: string[]) {
  const res = await createToken(scopes === undefined ? {} : { scopes });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string; token: string }>();
}
const listed = async (id: string) =>
  ((await h.app.inject({ method: 'GET', url: '/v1/api_tokens?limit=100', headers: owner() })).json().data as { id: string; scopes: string[] }[]).find((t) => t.id === id)!;
const send = (token: string, method: 'GET' | 'POST', url: string, payload?: object) => h.app.inject({ method, url, headers: as(token), ...(payload ? { payload } : {}) });

describe('creating and listing', () => {
  test('scopes are kept (sorted, once each) and listed; a token made without them lists every scope; the creation answer keeps the spec fields', async () => {
    const made = await createToken({ scopes: ['secrets:write', 'dashboards:read'] });
    assert.deepEqual(Object.keys(made.json()).sort(), ['expires_at', 'id', 'name', 'token']);
    assert.deepEqual((await listed(made.json().id)).scopes, ['dashboards:read', 'secrets:write']);
    assert.deepEqual((await listed((await tokenWith()).id)).scopes, [...TOKEN_SCOPES]);
    assert.deepEqual((await listed((await tokenWith([])).id)).scopes, []);
  });

  test('an unknown scope or one given twice: 422 at its path, the message listing the scopes', async () => {
    const unknown = await createToken({ scopes: ['secrets:read', 'root'] });
    assert.equal(unknown.statusCode, 422);
    assert.deepEqual(firstError(unknown.json()).path, ['body', 'scopes', '1']);
    for (const scope of TOKEN_SCOPES) assert.ok(firstError(unknown.json()).message.includes(`"${scope}"`), scope);
    const twice = await createToken({ scopes: ['secrets:read', 'secrets:read'] });
    assert.equal(twice.statusCode, 422);
    assert.deepEqual(firstError(twice.json()).path, ['body', 'scopes']);
  });
});

describe('enforcement', () => {
  test(':write implies :read of its area only; a refusal names the scope needed', async () => {
    const { token } = await tokenWith(['secrets:write']);
    assert.equal((await send(token, 'GET', '/v1/secrets')).statusCode, 200, 'secrets:write reads secrets');
    const made = await send(token, 'POST', '/v1/secrets', { name: 'by a scoped token' });
    assert.equal(made.statusCode, 201);
    const dashboards = await send(token, 'GET', '/v1/dashboards');
    assert.equal(dashboards.statusCode, 403);
    assert.equal(firstError(dashboards.json()).code, 7025);
    assert.deepEqual(firstError(dashboards.json()).metadata, { required_scope: 'dashboards:read' });
  });

  test('secrets:access is never implied, and implies nothing', async () => {
    const writer = (await tokenWith(['secrets:write'])).token;
    const secret = (await send(writer, 'POST', '/v1/secrets', { name: 'payload-held' })).json();
    const version = (await send(writer, 'POST', `/v1/secrets/${secret.id}/versions`, { data: Buffer.from('x').toString('base64') })).json();
    const refused = await send(writer, 'GET', `/v1/secrets/${secret.id}/versions/${version.id}:access`);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(firstError(refused.json()).metadata, { required_scope: 'secrets:access' });
    const reader = (await tokenWith(['secrets:access'])).token;
    assert.equal((await send(reader, 'GET', `/v1/secrets/${secret.id}/versions/latest:access`)).statusCode, 200);
    assert.equal((await send(reader, 'GET', `/v1/secrets/${secret.id}/versions`)).statusCode, 403, 'listing versions needs secrets:read');
  });

  test('no scopes: only what is declared open to any token (the workspace, its quotas); a token made before scopes (null) may do everything; sessions are judged by role', async () => {
    const { token } = await tokenWith([]);
    assert.equal((await send(token, 'GET', `/v1/workspaces/${s.workspaceId}`)).statusCode, 200);
    assert.equal((await send(token, 'GET', `/v1/workspaces/${s.workspaceId}/quotas`)).statusCode, 200);
    assert.equal((await send(token, 'GET', '/v1/secrets')).statusCode, 403);
    // Issue 48.11: the members list answered any token of the workspace.
    const members = await send(token, 'GET', `/v1/workspaces/${s.workspaceId}/members`);
    assert.equal(members.statusCode, 403, members.body);
    assert.equal(firstError(members.json()).code, 7025);
    assert.deepEqual(firstError(members.json()).metadata, { required_scope: 'members:read' });
    assert.equal((await send(s.apiToken, 'GET', '/v1/secrets')).statusCode, 200, 'the seed token was made without scopes');
    const member = await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as(s.member.session, s.workspaceId) });
    assert.equal(member.statusCode, 200);
  });

  test('the document names each operation scope, in x-required-scope and its description', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const access = doc.paths['/v1/secrets/{id}/versions/{vid}:access'].get;
    assert.equal(access['x-required-scope'], 'secrets:access');
    assert.match(access.description, /API tokens need the scope `secrets:access`/);
    assert.equal(doc.paths['/v1/machines/{id}'].delete['x-required-scope'], 'compute:write');
    assert.equal(doc.paths['/v1/installs/{id}/repository.git/git-upload-pack'].post['x-required-scope'], 'installs:read');
    assert.equal(doc.paths['/v1/api_tokens'].get['x-required-scope'], 'tokens:read');
    const create = doc.paths['/v1/api_tokens'].post;
    assert.equal(create['x-required-scope'], null, 'owners and admins only: no token may create tokens');
    assert.equal(create['x-token-scope-why'].tokens, 'refused');
    assert.match(create.description, /API tokens cannot call this: an owner or admin makes and revokes tokens/);
    const quotas = doc.paths['/v1/workspaces/{id}/quotas'].get;
    assert.equal(quotas['x-required-scope'], null);
    assert.equal(quotas['x-token-scope-why'].tokens, 'open');
    assert.match(quotas.description, /Any API token of the workspace may call this, whatever its scopes, since/);
    assert.equal(doc.paths['/v1/workspaces/{id}/members'].get['x-required-scope'], 'members:read');
    assert.equal(doc.paths['/v1/notifications'].get['x-required-scope'], undefined, 'for users only: no token gets that far (7024)');
  });

  test("members:read (issue 48): the members and the pending invitations for a token that has it; writes of members and invitations stay an owner's or admin's", async () => {
    const invited = await h.app.inject({ method: 'POST', url: `/v1/workspaces/${s.workspaceId}/invitations`, headers: owner(), payload: { email: 'pending@example.com', role: 'member' } });
    assert.equal(invited.statusCode, 201, invited.body);
    const reader = (await tokenWith(['members:read'])).token;
    const members = await send(reader, 'GET', `/v1/workspaces/${s.workspaceId}/members`);
    assert.equal(members.statusCode, 200, members.body);
    assert.deepEqual((members.json().data as { user_id: string }[]).map((m) => m.user_id).sort(), [s.owner.userId, s.admin.userId, s.member.userId].sort());
    const invitations = await send(reader, 'GET', `/v1/workspaces/${s.workspaceId}/invitations`);
    assert.equal(invitations.statusCode, 200, invitations.body);
    assert.ok((invitations.json().data as { email: string }[]).some((i) => i.email === 'pending@example.com'));
    const other = (await tokenWith(TOKEN_SCOPES.filter((x) => x !== 'members:read'))).token;
    for (const url of [`/v1/workspaces/${s.workspaceId}/members`, `/v1/workspaces/${s.workspaceId}/invitations`]) {
      const refused = await send(other, 'GET', url);
      assert.equal(refused.statusCode, 403, url);
      assert.deepEqual(firstError(refused.json()).metadata, { required_scope: 'members:read' }, url);
      assert.equal((await send(s.apiToken, 'GET', url)).statusCode, 200, `${url}: a token made without scopes holds members:read`);
    }
    // Users: any member lists the members; the pending invitations stay an owner's or admin's.
    const asMember = (url: string) => h.app.inject({ method: 'GET', url, headers: as(s.member.session, s.workspaceId) });
    assert.equal((await asMember(`/v1/workspaces/${s.workspaceId}/members`)).statusCode, 200);
    const memberInvitations = await asMember(`/v1/workspaces/${s.workspaceId}/invitations`);
    assert.equal(memberInvitations.statusCode, 403);
    assert.equal(firstError(memberInvitations.json()).code, 7023);
    // Every scope, the seed token: writes of members and invitations are refused by role.
    const writes = [
      h.app.inject({ method: 'POST', url: `/v1/workspaces/${s.workspaceId}/invitations`, headers: as(s.apiToken), payload: { email: 'by-token@example.com', role: 'member' } }),
      h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/invitations/${invited.json().id}`, headers: as(s.apiToken) }),
      h.app.inject({ method: 'PATCH', url: `/v1/workspaces/${s.workspaceId}/members/${s.member.userId}`, headers: as(s.apiToken), payload: { role: 'admin' } }),
      h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/members/${s.member.userId}`, headers: as(s.apiToken) }),
    ];
    for (const res of await Promise.all(writes)) {
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(firstError(res.json()).code, 7023, res.body);
    }
  });
});
