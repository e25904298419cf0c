import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

const h = useTestApp();
const s = h.seeded;

type Call = { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: object };
const call = (credential: string, workspace: string | undefined, c: Call) =>
  h.app.inject({ method: c.method, url: c.url, headers: as(credential, workspace), ...(c.payload ? { payload: c.payload } : {}) });

/** Two requests started together, the second first when `swap`; their answers in the order given. */
async function together<T>(a: () => Promise<T>, b: () => Promise<T>, swap: boolean): Promise<[T, T]> {
  if (!swap) return Promise.all([a(), b()]);
  const [second, first] = await Promise.all([b(), a()]);
  return [first, second];
}

/** A fresh workspace with an owner, an admin and two members, each with a session. */
async function team() {
  const seed = await h.seed(`team-${Math.random().toString(36).slice(2, 7)}`);
  const { user_id } = await h.admin.createUser({ name: 'member two', email: `two-${seed.workspaceId}@example.com` });
  await h.admin.addMember(seed.workspaceId, user_id, 'member');
  const { session_token } = await h.admin.createSession(user_id);
  return { ...seed, member2: { userId: user_id, session: session_token } };
}

describe('POST /v1/workspaces', () => {
  test('any signed-in user makes one and is its owner; it is listed with the role; a workspace API token cannot (403 7024)', async () => {
    const res = await call(s.member.session, undefined, { method: 'POST', url: '/v1/workspaces', payload: { name: 'Side project' } });
    assert.equal(res.statusCode, 201, res.body);
    const ws = res.json();
    assert.equal(ws.role, 'owner');
    assert.equal(ws.name, 'Side project');
    assert.ok(res.headers.etag);
    const listed = (await call(s.member.session, undefined, { method: 'GET', url: '/v1/workspaces' })).json().data;
    assert.deepEqual(listed.find((w: { id: string }) => w.id === ws.id)?.role, 'owner');
    const token = await call(s.apiToken, undefined, { method: 'POST', url: '/v1/workspaces', payload: { name: 'x' } });
    assert.equal(token.statusCode, 403);
    assert.equal(firstError(token.json()).code, 7024);
    for (const payload of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 'ok', extra: 1 }]) {
      assert.equal((await call(s.member.session, undefined, { method: 'POST', url: '/v1/workspaces', payload })).statusCode, 422, JSON.stringify(payload));
    }
  });
});

describe('members', () => {
  test('any member lists them with email, name, role and when they joined', async () => {
    const t = await team();
    const res = await call(t.member.session, t.workspaceId, { method: 'GET', url: `/v1/workspaces/${t.workspaceId}/members` });
    assert.equal(res.statusCode, 200, res.body);
    const members = res.json().data;
    assert.deepEqual(members.map((m: { role: string }) => m.role).sort(), ['admin', 'member', 'member', 'owner']);
    assert.deepEqual(Object.keys(members[0]).sort(), ['email', 'joined_at', 'name', 'role', 'user_id']);
    const two = members.find((m: { user_id: string }) => m.user_id === t.member2.userId);
    assert.equal(two.email, `two-${t.workspaceId}@example.com`);
    const page = (await call(t.owner.session, t.workspaceId, { method: 'GET', url: `/v1/workspaces/${t.workspaceId}/members?limit=3` })).json();
    assert.equal(page.data.length, 3);
    assert.equal(page.has_more, true);
    const rest = (await call(t.owner.session, t.workspaceId, { method: 'GET', url: `/v1/workspaces/${t.workspaceId}/members?limit=3&cursor=${page.next_cursor}` })).json();
    assert.equal(rest.data.length, 1);
  });

  test('roles: owner or admin change them; only an owner grants or takes the owner role (7049); the last owner keeps it (409 7043)', async () => {
    const t = await team();
    const patch = (cred: string, userId: string, role: string) => call(cred, t.workspaceId, { method: 'PATCH', url: `/v1/workspaces/${t.workspaceId}/members/${userId}`, payload: { role } });
    const byAdmin = await patch(t.admin.session, t.member2.userId, 'admin');
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    assert.equal(byAdmin.json().role, 'admin');
    assert.equal(firstError((await patch(t.member.session, t.member2.userId, 'member')).json()).code, 7023, 'a member cannot');
    assert.equal(firstError((await patch(t.admin.session, t.member2.userId, 'owner')).json()).code, 7049, 'an admin cannot grant owner');
    assert.equal(firstError((await patch(t.admin.session, t.owner.userId, 'member')).json()).code, 7049, 'nor demote an owner');
    const last = await patch(t.owner.session, t.owner.userId, 'admin');
    assert.equal(last.statusCode, 409);
    assert.equal(firstError(last.json()).code, 7043);
    assert.equal((await patch(t.owner.session, t.admin.userId, 'owner')).json().role, 'owner');
    assert.equal((await patch(t.owner.session, t.owner.userId, 'member')).json().role, 'member', 'with another owner, an owner may step down');
    assert.equal((await patch(t.admin.session, 'usr_01hzzzzzzzzzzzzzzzzzzzzzzz', 'member')).statusCode, 404);
    assert.equal((await patch(t.admin.session, t.member2.userId, 'boss')).statusCode, 422);
  });

  test('removal: owner or admin remove others, anyone removes themselves; the removed user is refused on their next request', async () => {
    const t = await team();
    const remove = (cred: string, userId: string) => call(cred, t.workspaceId, { method: 'DELETE', url: `/v1/workspaces/${t.workspaceId}/members/${userId}` });
    assert.equal(firstError((await remove(t.member.session, t.member2.userId)).json()).code, 7023, 'a member cannot remove another');
    assert.equal(firstError((await remove(t.admin.session, t.owner.userId)).json()).code, 7049, 'an admin cannot remove an owner');
    assert.equal((await remove(t.admin.session, t.member2.userId)).statusCode, 204);
    const refused = await call(t.member2.session, t.workspaceId, { method: 'GET', url: '/v1/api_tokens' });
    assert.equal(refused.statusCode, 403);
    assert.equal(firstError(refused.json()).code, 7022);
    assert.equal((await remove(t.member.session, t.member.userId)).statusCode, 204, 'leaving');
    assert.equal((await call(t.member.session, t.workspaceId, { method: 'GET', url: '/v1/me' })).statusCode, 403);
    const last = await remove(t.owner.session, t.owner.userId);
    assert.equal(last.statusCode, 409);
    assert.equal(firstError(last.json()).code, 7043);
    assert.equal((await remove(t.owner.session, t.member2.userId)).statusCode, 404, 'no longer a member');
  });

  test('two owners removing each other at the same time leave one owner', async () => {
    for (let round = 0; round < 5; round++) {
      const t = await team();
      await h.admin.addMember(t.workspaceId, t.admin.userId, 'owner');
      const [a, b] = await Promise.all([
        call(t.owner.session, t.workspaceId, { method: 'DELETE', url: `/v1/workspaces/${t.workspaceId}/members/${t.admin.userId}` }),
        call(t.admin.session, t.workspaceId, { method: 'DELETE', url: `/v1/workspaces/${t.workspaceId}/members/${t.owner.userId}` }),
      ]);
      const statuses = [a.statusCode, b.statusCode].sort();
      assert.ok(statuses[0] === 204 && statuses[1] !== 204, `one removal wins: ${statuses.join(',')}`);
      const owners = await h.database.db.selectFrom('memberships').select('user_id').where('workspace_id', '=', t.workspaceId).where('role', '=', 'owner').execute();
      assert.equal(owners.length, 1);
    }
  });

  test('an admin changing a member while an owner makes them owner never demotes an owner, and every event names the role it replaced (issue 48.9)', async (tc) => {
    // Judged against what was stored: the member's final role, and the chain of its member.updated
    // events (order-free: each must replace the role the previous change left, from 'member').
    const TRIES = 30;
    const outcomes = { adminFirst: 0, ownerFirst: 0 };
    for (let round = 0; round < TRIES; round++) {
      const t = await team();
      const x = t.member2.userId;
      const patch = (cred: string, role: string) => call(cred, t.workspaceId, { method: 'PATCH', url: `/v1/workspaces/${t.workspaceId}/members/${x}`, payload: { role } });
      // Which request starts first alternates, so that each order is tried on every engine.
      const [byAdmin, byOwner] = await together(
        () => patch(t.admin.session, 'admin'),
        () => patch(t.owner.session, 'owner'),
        round % 2 === 1,
      );
      assert.equal(byOwner.statusCode, 200, `round ${round}: the owner's promotion ${byOwner.body}`);
      assert.ok(byAdmin.statusCode === 200 || (byAdmin.statusCode === 403 && firstError(byAdmin.json()).code === 7049), `round ${round}: the admin's change ${byAdmin.statusCode} ${byAdmin.body}`);
      const final = await h.database.db.selectFrom('memberships').select('role').where('workspace_id', '=', t.workspaceId).where('user_id', '=', x).executeTakeFirstOrThrow();
      assert.equal(final.role, 'owner', `round ${round}: an admin demoted an owner (admin ${byAdmin.statusCode}, owner ${byOwner.statusCode})`);
      const changes = (
        await h.database.db.selectFrom('events').select('data').where('workspace_id', '=', t.workspaceId).where('type', '=', 'member.updated').where('resource_id', '=', x).execute()
      ).map((e) => JSON.parse(e.data) as { role: string; previous_role: string });
      assert.equal(changes.length, byAdmin.statusCode === 200 ? 2 : 1, `round ${round}: one event per change that was made`);
      let role = 'member';
      const left = [...changes];
      while (left.length > 0) {
        const next = left.findIndex((c) => c.previous_role === role);
        assert.ok(next >= 0, `round ${round}: events ${JSON.stringify(changes)} do not chain from "member" (stuck at "${role}")`);
        role = left.splice(next, 1)[0]!.role;
      }
      assert.equal(role, final.role, `round ${round}: the events end where the membership is`);
      if (byAdmin.statusCode === 200) outcomes.adminFirst++;
      else outcomes.ownerFirst++;
    }
    tc.diagnostic(`role race: ${JSON.stringify(outcomes)} of ${TRIES}`);
  });

  test('an admin removing a member while an owner makes them owner never removes an owner (issue 48.9)', async (tc) => {
    const TRIES = 20;
    const outcomes = { removed: 0, promoted: 0 };
    for (let round = 0; round < TRIES; round++) {
      const t = await team();
      const x = t.member2.userId;
      const remove = () => call(t.admin.session, t.workspaceId, { method: 'DELETE', url: `/v1/workspaces/${t.workspaceId}/members/${x}` });
      const promote = () => call(t.owner.session, t.workspaceId, { method: 'PATCH', url: `/v1/workspaces/${t.workspaceId}/members/${x}`, payload: { role: 'owner' } });
      const [removal, promotion] = await together(remove, promote, round % 2 === 1);
      const left = await h.database.db.selectFrom('memberships').select('role').where('workspace_id', '=', t.workspaceId).where('user_id', '=', x).executeTakeFirst();
      const removed = await h.database.db.selectFrom('events').select('data').where('workspace_id', '=', t.workspaceId).where('type', '=', 'member.removed').where('resource_id', '=', x).execute();
      if (removal.statusCode === 204) {
        assert.equal(promotion.statusCode, 404, `round ${round}: removed first, the promotion finds no member (${promotion.body})`);
        assert.equal(left, undefined);
        assert.equal(JSON.parse(removed[0]!.data).role, 'member', `round ${round}: the event names the role removed`);
        outcomes.removed++;
      } else {
        assert.equal(promotion.statusCode, 200, `round ${round}: ${promotion.body}`);
        assert.equal(removal.statusCode, 403, `round ${round}: an admin removed an owner`);
        assert.equal(firstError(removal.json()).code, 7049);
        assert.equal(left?.role, 'owner');
        assert.equal(removed.length, 0);
        outcomes.promoted++;
      }
    }
    tc.diagnostic(`removal race: ${JSON.stringify(outcomes)} of ${TRIES}`);
  });

  test('another workspace is not found; its members are never listed', async () => {
    const t = await team();
    const res = await call(s.owner.session, s.workspaceId, { method: 'GET', url: `/v1/workspaces/${t.workspaceId}/members` });
    assert.equal(res.statusCode, 404);
    const del = await call(s.owner.session, s.workspaceId, { method: 'DELETE', url: `/v1/workspaces/${t.workspaceId}/members/${t.member.userId}` });
    assert.equal(del.statusCode, 404);
  });
});
