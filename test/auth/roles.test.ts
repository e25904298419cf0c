import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { PERMISSIONS, PERMISSION_NAMES, type Permission } from '../../src/auth/roles.js';
import { secretClient } from '../secrets/secret-client.js';

/**
 * docs/spec-gaps.md, "Roles (issue 50)": the viewer reads and writes nothing,
 * owners and admins alone take the irreversible and workspace-wide actions, `GET /v1/me` lists
 * what each membership may do, and API tokens act within their scopes, never a role.
 */
let viewer: { userId: string; session: string };

async function memberWith(role: 'viewer' | 'member') {
  const { user_id } = await h.admin.createUser({ name: role });
  await h.admin.addMember(s.workspaceId, user_id, role);
  const { session_token } = await h.admin.createSession(user_id);
  return { userId: user_id, session: session_token };
}

async function tokenWith(scopes: string[]): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: `t-${scopes.join('-') || 'none'}`, scopes } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ token: string }>().token;
}

const h = useTestApp({
  setup: async () => {
    viewer = await memberWith('viewer');
  },
});
const s = h.seeded;

type Call = { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: object; headers?: Record<string, string> };
/** Guarded actions whose routes this build does not have yet (docs/spec-gaps.md, "Roles (issue 50)"). */
const NO_ROUTE_YET: readonly Permission[] = [];
const ETAG = { 'if-match': '"0000000000000000"' };

/** One call per guarded route, with a well-formed request (so no 422 comes before the 403) naming things that need not exist. */
function guardedCalls(): Record<Exclude<Permission, 'write'>, Call[]> {
  const ws = s.workspaceId;
  return {
    'secrets.access': [{ method: 'GET', url: '/v1/secrets/sec_0000000000000000000000000a/versions/latest:access' }],
    'secret_versions.destroy': [{ method: 'POST', url: '/v1/secrets/sec_0000000000000000000000000a/versions/secv_0000000000000000000000000a:destroy', headers: ETAG }],
    'secrets.delete': [{ method: 'DELETE', url: '/v1/secrets/sec_0000000000000000000000000a', headers: ETAG }],
    'machines.delete': [{ method: 'DELETE', url: '/v1/machines/mch_0000000000000000000000000a', headers: ETAG }],
    'compute_configs.delete': [{ method: 'DELETE', url: '/v1/compute/configs/cc_0000000000000000000000000a', headers: ETAG }],
    'clusters.delete': [{ method: 'DELETE', url: '/v1/clusters/cl_0000000000000000000000000a', headers: ETAG }],
    'installs.delete': [{ method: 'DELETE', url: '/v1/installs/inst_0000000000000000000000000a', headers: ETAG }],
    'packages.delete': [{ method: 'DELETE', url: '/v1/packages/pkg_0000000000000000000000000a', headers: ETAG }],
    'repository_change_requests.approve': [{ method: 'POST', url: '/v1/repository_change_requests/rcr_0000000000000000000000000a:approve', headers: ETAG }],
    'webhooks.manage': [
      { method: 'POST', url: '/v1/webhooks', payload: { url: 'https://hooks.example.com/x', event_types: ['secret.created'] } },
      { method: 'PATCH', url: '/v1/webhooks/wh_0000000000000000000000000a', payload: { enabled: false }, headers: ETAG },
      { method: 'DELETE', url: '/v1/webhooks/wh_0000000000000000000000000a', headers: ETAG },
      { method: 'POST', url: '/v1/webhooks/wh_0000000000000000000000000a:test' },
      { method: 'POST', url: '/v1/webhooks/wh_0000000000000000000000000a/deliveries/whd_0000000000000000000000000a:retry' },
    ],
    'webhooks.read': [
      { method: 'GET', url: '/v1/webhooks' },
      { method: 'GET', url: '/v1/webhooks/wh_0000000000000000000000000a/deliveries/whd_0000000000000000000000000a/attempts' },
    ],
    'audit.read': [{ method: 'GET', url: '/v1/audit_events' }],
    'members.manage': [{ method: 'PATCH', url: `/v1/workspaces/${ws}/members/usr_0000000000000000000000000a`, payload: { role: 'member' } }],
    'invitations.manage': [
      { method: 'POST', url: `/v1/workspaces/${ws}/invitations`, payload: { email: 'someone@example.com', role: 'viewer' } },
      { method: 'DELETE', url: `/v1/workspaces/${ws}/invitations/inv_0000000000000000000000000a` },
    ],
    'invitations.read': [{ method: 'GET', url: `/v1/workspaces/${ws}/invitations` }],
    'api_tokens.manage': [
      { method: 'POST', url: '/v1/api_tokens', payload: { name: 'by-role-test' } },
      { method: 'DELETE', url: '/v1/api_tokens/tok_0000000000000000000000000a' },
    ],
    'workspace.manage': [{ method: 'PATCH', url: `/v1/workspaces/${ws}`, payload: { name: 'Acme' }, headers: ETAG }],
  };
}

const send = (c: Call, headers: Record<string, string>) => h.app.inject({ method: c.method, url: c.url, headers: { ...headers, ...(c.headers ?? {}) }, ...(c.payload ? { payload: c.payload } : {}) });

describe('every guarded action, per role', () => {
  for (const permission of PERMISSION_NAMES.filter((p): p is Exclude<Permission, 'write'> => p !== 'write')) {
    test(`${permission}: ${PERMISSIONS[permission].roles.join(' and ')} may; the others are refused (a member 7023, a viewer 7027, naming the roles)`, async () => {
      const roles = PERMISSIONS[permission].roles;
      const people = { owner: s.owner.session, admin: s.admin.session, member: s.member.session, viewer: viewer.session } as const;
      for (const call of guardedCalls()[permission]) {
        for (const [role, session] of Object.entries(people)) {
          const res = await send(call, as(session, s.workspaceId));
          const where = `${role} ${call.method} ${call.url}: ${res.body}`;
          // The refusals below prove the request well-formed (a 422 would come first); an allowed
          // caller gets past the role to the service (404, 409, or its own checks).
          if (roles.includes(role as never)) {
            assert.notEqual(res.statusCode, 403, where);
          } else {
            assert.equal(res.statusCode, 403, where);
            assert.equal(firstError(res.json()).code, role === 'viewer' ? 7027 : 7023, where);
            assert.match(firstError(res.json()).message, new RegExp(roles.join(' or ')), where);
          }
        }
      }
    });
  }
});

test("the permissions of GET /v1/me are the routes' own: every guarded action a route declares is in the list with its roles and token scope, and each name of the list but `write` guards a route", async () => {
  const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, Record<string, Record<string, unknown>>> }>();
  const used = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const permission = op['x-permission'] as Permission | undefined;
      if (!permission) continue;
      used.add(permission);
      assert.deepEqual(op['x-roles'], [...PERMISSIONS[permission].roles], `${method} ${path}`);
      assert.equal(op['x-required-scope'], PERMISSIONS[permission].scope, `${method} ${path}`);
    }
  }
  assert.deepEqual([...used].sort(), PERMISSION_NAMES.filter((p) => p !== 'write' && !NO_ROUTE_YET.includes(p)).sort());
});

describe('the viewer', () => {
  test("reads the workspace: secrets, their versions' metadata, dashboards, members, installs", async () => {
    const owner = secretClient(h, as(s.owner.session, s.workspaceId));
    const secret = await owner.createSecret();
    const version = await owner.addVersion(secret.id, Buffer.from('hush'));
    const headers = as(viewer.session, s.workspaceId);
    for (const url of [
      '/v1/secrets',
      `/v1/secrets/${secret.id}`,
      `/v1/secrets/${secret.id}/versions/${version.id}`,
      '/v1/dashboards',
      `/v1/workspaces/${s.workspaceId}/members`,
      '/v1/installs',
      '/v1/packages',
      '/v1/machines',
    ]) {
      const res = await h.app.inject({ method: 'GET', url, headers });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    }
    const payload = await secretClient(h, headers).access(secret.id, version.id);
    assert.equal(payload.statusCode, 403, payload.body);
    assert.equal(firstError(payload.json()).code, 7027);
  });

  test('writes nothing: every write of the workspace, declared or not, is 403 7027 naming the roles it needs', async () => {
    const headers = as(viewer.session, s.workspaceId);
    const writes: Call[] = [
      { method: 'POST', url: '/v1/secrets', payload: { name: 'from-a-viewer' } },
      { method: 'DELETE', url: '/v1/dashboards/dash_0000000000000000000000000a', headers: ETAG },
      { method: 'POST', url: '/v1/secrets/sec_0000000000000000000000000a/versions/secv_0000000000000000000000000a:disable', headers: ETAG },
      { method: 'POST', url: '/v1/packages', payload: { name: 'from-a-viewer' } },
      { method: 'POST', url: '/v1/machines/mch_0000000000000000000000000a:suspend', payload: {}, headers: ETAG },
    ];
    for (const call of writes) {
      const res = await send(call, headers);
      assert.equal(res.statusCode, 403, `${call.url}: ${res.body}`);
      const error = firstError(res.json());
      assert.equal(error.code, 7027, res.body);
      assert.match(error.message, /owner or admin or member/);
    }
    const listed = await h.app.inject({ method: 'GET', url: '/v1/secrets', headers });
    assert.ok(!listed.json<{ data: { name: string }[] }>().data.some((x) => x.name === 'from-a-viewer'));
  });

  test('is invited as a viewer, made one, and leaves on its own', async () => {
    const invited = await h.app.inject({
      method: 'POST',
      url: `/v1/workspaces/${s.workspaceId}/invitations`,
      headers: as(s.admin.session, s.workspaceId),
      payload: { email: 'viewer-to-be@example.com', role: 'viewer' },
    });
    assert.equal(invited.statusCode, 201, invited.body);
    assert.equal(invited.json<{ role: string }>().role, 'viewer');
    const other = await memberWith('member');
    const changed = await h.app.inject({ method: 'PATCH', url: `/v1/workspaces/${s.workspaceId}/members/${other.userId}`, headers: as(s.admin.session, s.workspaceId), payload: { role: 'viewer' } });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.json<{ role: string }>().role, 'viewer');
    const refused = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(other.session, s.workspaceId), payload: { name: 'no' } });
    assert.equal(firstError(refused.json()).code, 7027);
    const left = await h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/members/${other.userId}`, headers: as(other.session, s.workspaceId) });
    assert.equal(left.statusCode, 204, left.body);
    const removeOther = await h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/members/${s.member.userId}`, headers: as(viewer.session, s.workspaceId) });
    assert.equal(removeOther.statusCode, 403, removeOther.body);
    assert.equal(firstError(removeOther.json()).code, 7027);
  });
});

describe('GET /v1/me', () => {
  test('lists each membership with its role and permissions; the workspace named has them at the top too', async () => {
    const expected = (role: 'owner' | 'admin' | 'member' | 'viewer') => PERMISSION_NAMES.filter((p) => PERMISSIONS[p].roles.includes(role));
    for (const [role, session] of [
      ['owner', s.owner.session],
      ['admin', s.admin.session],
      ['member', s.member.session],
      ['viewer', viewer.session],
    ] as const) {
      const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(session, s.workspaceId) })).json<{
        role: string;
        permissions: string[];
        memberships: { workspace: { id: string }; role: string; permissions: string[] }[];
      }>();
      assert.equal(me.role, role);
      assert.deepEqual(me.permissions, expected(role));
      assert.deepEqual(
        me.memberships.map((m) => [m.workspace.id, m.role, m.permissions]),
        [[s.workspaceId, role, expected(role)]],
      );
    }
    assert.deepEqual(expected('member'), ['write', 'secrets.access', 'repository_change_requests.approve']);
    assert.deepEqual(expected('viewer'), []);
    const unnamed = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(s.member.session) })).json<{ permissions: unknown; memberships: unknown[] }>();
    assert.equal(unnamed.permissions, null);
    assert.equal(unnamed.memberships.length, 1);
  });

  test('a token holds the permissions of its scopes, and no membership', async () => {
    const token = await tokenWith(['secrets:write']);
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(token) })).json<{ permissions: string[]; memberships: unknown[] }>();
    assert.deepEqual(me.permissions, ['write', 'secret_versions.destroy', 'secrets.delete']);
    assert.deepEqual(me.memberships, []);
    const all = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(s.apiToken) })).json<{ permissions: string[] }>();
    assert.deepEqual(
      all.permissions,
      PERMISSION_NAMES.filter((p) => PERMISSIONS[p].scope !== null || p === 'write'),
    );
  });
});

describe('API tokens act within their scopes, never a role', () => {
  test("a guarded action needs its area's write scope: with it the token may, without it 403 7025 naming the scope", async () => {
    const owner = secretClient(h, as(s.owner.session, s.workspaceId));
    const secret = await owner.createSecret();
    const v1 = await owner.addVersion(secret.id, Buffer.from('one'));
    const writer = secretClient(h, as(await tokenWith(['secrets:write'])));
    const reader = secretClient(h, as(await tokenWith(['secrets:read'])));
    const refused = await reader.transition(secret.id, v1.id, 'destroy', `"${v1.etag}"`);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(firstError(refused.json()).code, 7025);
    assert.equal(firstError(refused.json()).metadata?.required_scope, 'secrets:write');
    const destroyed = await writer.transition(secret.id, v1.id, 'destroy', `"${v1.etag}"`);
    assert.equal(destroyed.statusCode, 200, destroyed.body);
    const current = (await owner.call('GET', `/secrets/${secret.id}`)).json<{ etag: string }>();
    assert.equal((await reader.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': `"${current.etag}"` })).statusCode, 403);
    assert.equal((await writer.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': `"${current.etag}"` })).statusCode, 204);

    for (const [scope, call] of [
      ['webhooks:write', guardedCalls()['webhooks.manage'][0]!],
      ['compute:write', guardedCalls()['machines.delete'][0]!],
      ['compute:write', guardedCalls()['compute_configs.delete'][0]!],
    ] as const) {
      const without = await send(call, as(await tokenWith([scope.replace(':write', ':read')])));
      assert.equal(without.statusCode, 403, without.body);
      assert.equal(firstError(without.json()).metadata?.required_scope, scope);
      const withIt = await send(call, as(await tokenWith([scope])));
      assert.notEqual(withIt.statusCode, 403, withIt.body);
    }
  });

  test('the actions no token takes (members, invitations, API tokens, the workspace) stay refused to every token (7023)', async () => {
    for (const permission of ['members.manage', 'invitations.manage', 'api_tokens.manage', 'workspace.manage'] as const) {
      for (const call of guardedCalls()[permission]) {
        const res = await send(call, as(s.apiToken));
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(firstError(res.json()).code, 7023, res.body);
      }
    }
  });
});
