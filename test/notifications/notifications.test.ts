import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { notify, type NewNotification } from '../../src/notifications/service.js';

const h = useTestApp();
const s = h.seeded;

const TAGGED_401 = { _tag: 'Unauthorized', success: false, errors: [], result: {} };

function notice(userIds: string[], over: Partial<NewNotification> = {}): NewNotification {
  return {
    userIds,
    type: 'machine_expiry',
    resource_type: 'machine',
    resource_id: 'mch_01jabcdefghjkmnpqrstvwxyz0',
    title: 'A machine expires soon',
    body: 'Its snapshot is deleted in 7 days.',
    severity: 'info',
    context: { workspace_id: s.workspaceId, days: 7 },
    ...over,
  };
}

const list = (session: string, query = '', extra: Record<string, string> = {}) => h.app.inject({ method: 'GET', url: `/v1/notifications${query}`, headers: as(session, undefined, extra) });
const read = (session: string, id: string) => h.app.inject({ method: 'PATCH', url: `/v1/notifications/${id}/read`, headers: as(session) });

/** A user of their own, so counts are not disturbed by other tests. */
async function freshUser() {
  const { user_id } = await h.admin.createUser({ name: 'reader' });
  await h.admin.addMember(s.workspaceId, user_id, 'member');
  const { session_token } = await h.admin.createSession(user_id);
  return { userId: user_id, session: session_token };
}

describe('GET /v1/notifications', () => {
  test("the caller's own, newest first, every field, read_at null while unread; no Service-Context needed", async () => {
    const u = await freshUser();
    const other = await freshUser();
    await notify(h.database.db, h.clock, notice([u.userId], { title: 'first' }));
    h.clock.advanceSeconds(5);
    await notify(h.database.db, h.clock, notice([u.userId, other.userId], { title: 'second', severity: 'warning' }));
    const res = await list(u.session);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.has_more, false);
    assert.equal(body.next_cursor, null);
    assert.deepEqual(
      body.data.map((n: { title: string }) => n.title),
      ['second', 'first'],
    );
    const [n] = body.data;
    assert.deepEqual(Object.keys(n).sort(), ['body', 'context', 'created_at', 'id', 'read_at', 'resource_id', 'resource_type', 'severity', 'title', 'type']);
    assert.match(n.id, /^ntf_[0-9a-z]{26}$/);
    assert.equal(n.type, 'machine_expiry');
    assert.equal(n.resource_type, 'machine');
    assert.equal(n.severity, 'warning');
    assert.equal(n.read_at, null);
    assert.equal(n.created_at, Math.floor(h.clock.nowMs() / 1000));
    assert.deepEqual(n.context, { workspace_id: s.workspaceId, days: 7 });
    assert.equal((await list(other.session)).json().data.length, 1, 'the other user sees only their own');
  });

  test('at most 50 a page; limit 1-50 and the cursor page further', async () => {
    const u = await freshUser();
    for (let i = 0; i < 53; i++) await notify(h.database.db, h.clock, notice([u.userId], { title: `n${i}` }));
    const first = (await list(u.session)).json();
    assert.equal(first.data.length, 50);
    assert.equal(first.data[0].title, 'n52');
    assert.equal(first.has_more, true);
    const rest = (await list(u.session, `?cursor=${first.next_cursor}`)).json();
    assert.deepEqual(
      rest.data.map((n: { title: string }) => n.title),
      ['n2', 'n1', 'n0'],
    );
    assert.equal(rest.has_more, false);
    assert.equal(rest.next_cursor, null);
    const small = (await list(u.session, '?limit=1')).json();
    assert.equal(small.data.length, 1);
    assert.ok(small.next_cursor);
    for (const limit of ['51', '0', 'x']) {
      const res = await list(u.session, `?limit=${limit}`);
      assert.equal(res.statusCode, 422, limit);
      assert.deepEqual(firstError(res.json()).path, ['query', 'limit']);
    }
  });

  test('unread=true gives only unread ones; unread=false and no unread give all; anything else is 422', async () => {
    const u = await freshUser();
    await notify(h.database.db, h.clock, notice([u.userId], { title: 'old' }));
    await notify(h.database.db, h.clock, notice([u.userId], { title: 'new' }));
    const all = (await list(u.session)).json().data;
    assert.equal((await read(u.session, all[1].id)).statusCode, 204);
    assert.deepEqual(
      (await list(u.session, '?unread=true')).json().data.map((n: { title: string }) => n.title),
      ['new'],
    );
    assert.deepEqual(
      (await list(u.session, '?unread=false')).json().data.map((n: { title: string }) => n.title),
      ['new', 'old'],
    );
    const bad = await list(u.session, '?unread=yes');
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(firstError(bad.json()).path, ['query', 'unread']);
    const extra = await list(u.session, '?since=1');
    assert.deepEqual(firstError(extra.json()).path, ['query', 'since']);
  });

  test('a cursor of the unread list is refused on the full list (422), as is a tampered one', async () => {
    const u = await freshUser();
    for (let i = 0; i < 3; i++) await notify(h.database.db, h.clock, notice([u.userId]));
    const page = (await list(u.session, '?unread=true&limit=1')).json();
    const res = await list(u.session, `?cursor=${page.next_cursor}`);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['query', 'cursor']);
    const other = await freshUser();
    const foreign = await list(other.session, `?unread=true&cursor=${page.next_cursor}`);
    assert.equal(foreign.statusCode, 422, "another user's cursor");
  });

  test('a Service-Context that is sent must be well-formed (422); a well-formed one is accepted', async () => {
    const bad = await list(s.member.session, '', { 'service-context': 'not-a-workspace' });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(firstError(bad.json()).path, ['headers', 'service-context']);
    assert.equal((await list(s.member.session, '', { 'service-context': s.workspaceId })).statusCode, 200);
  });
});

describe('PATCH /v1/notifications/{id}/read', () => {
  test('204 with no body; read_at is set once and a repeat changes nothing', async () => {
    const u = await freshUser();
    await notify(h.database.db, h.clock, notice([u.userId]));
    const [n] = (await list(u.session)).json().data;
    const res = await read(u.session, n.id);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const readAt = Math.floor(h.clock.nowMs() / 1000);
    assert.equal((await list(u.session)).json().data[0].read_at, readAt);
    h.clock.advanceSeconds(60);
    assert.equal((await read(u.session, n.id.slice('ntf_'.length))).statusCode, 204, 'bare id, already read');
    assert.equal((await list(u.session)).json().data[0].read_at, readAt, 'unchanged');
  });

  test("someone else's notification: 204, and it stays unread for its owner", async () => {
    const owner = await freshUser();
    const intruder = await freshUser();
    await notify(h.database.db, h.clock, notice([owner.userId]));
    const [n] = (await list(owner.session)).json().data;
    assert.equal((await read(intruder.session, n.id)).statusCode, 204);
    assert.equal((await list(owner.session)).json().data[0].read_at, null);
    assert.equal((await list(owner.session, '?unread=true')).json().data.length, 1);
  });

  test('an unknown well-formed id is 204; an id over 54 characters is 422 on path.id', async () => {
    assert.equal((await read(s.member.session, 'ntf_01jabcdefghjkmnpqrstvwxyz0')).statusCode, 204);
    assert.equal((await read(s.member.session, 'x'.repeat(54))).statusCode, 204);
    const long = await read(s.member.session, 'x'.repeat(55));
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['path', 'id']);
  });

  test('a repeated Idempotency-Key replays the 204', async () => {
    const u = await freshUser();
    await notify(h.database.db, h.clock, notice([u.userId]));
    const [n] = (await list(u.session)).json().data;
    const call = () => h.app.inject({ method: 'PATCH', url: `/v1/notifications/${n.id}/read`, headers: as(u.session, undefined, { 'idempotency-key': 'k1' }) });
    assert.equal((await call()).statusCode, 204);
    const again = await call();
    assert.equal(again.statusCode, 204);
    assert.equal(again.headers['idempotent-replayed'], 'true');
  });
});

describe('credentials on the notification endpoints', () => {
  test('the 401 is exactly {_tag: "Unauthorized", success: false, errors: [], result: {}}', async () => {
    for (const authorization of [undefined, 'Bearer nope', `Bearer ${'Z'.repeat(32)}`, 'Basic abc']) {
      const headers = authorization ? { authorization } : {};
      for (const req of [
        { method: 'GET' as const, url: '/v1/notifications' },
        { method: 'GET' as const, url: '/v1/notifications?unread=maybe&limit=999' },
        { method: 'PATCH' as const, url: `/v1/notifications/${'x'.repeat(99)}/read` },
      ]) {
        const res = await h.app.inject({ ...req, headers });
        assert.equal(res.statusCode, 401, `${req.method} ${req.url} ${authorization}`);
        assert.deepEqual(res.json(), TAGGED_401);
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      }
    }
  });

  test('a workspace API token has no user: 403 (7024) on both', async () => {
    const get = await h.app.inject({ method: 'GET', url: '/v1/notifications', headers: as(s.apiToken) });
    assert.equal(get.statusCode, 403);
    assert.equal(firstError(get.json()).code, 7024);
    const patch = await read(s.apiToken, 'ntf_01jabcdefghjkmnpqrstvwxyz0');
    assert.equal(patch.statusCode, 403);
    assert.equal(firstError(patch.json()).code, 7024);
  });
});

describe('notify()', () => {
  test('a dedupe key makes a notice once per user, even when sent concurrently', async () => {
    const a = await freshUser();
    const b = await freshUser();
    const n = notice([a.userId, b.userId], { dedupeKey: 'once:1' });
    const counts = await Promise.all([notify(h.database.db, h.clock, n), notify(h.database.db, h.clock, n), notify(h.database.db, h.clock, n)]);
    assert.equal(
      counts.reduce((x, y) => x + y, 0),
      2,
    );
    assert.equal(await notify(h.database.db, h.clock, notice([a.userId, b.userId], { dedupeKey: 'once:1' })), 0);
    assert.equal((await list(a.session)).json().data.length, 1);
    assert.equal((await list(b.session)).json().data.length, 1);
    assert.equal(await notify(h.database.db, h.clock, notice([a.userId], { dedupeKey: 'once:2' })), 1, 'another key is another notice');
  });

  test('sent in a transaction that rolls back, it does not exist', async () => {
    const u = await freshUser();
    await assert.rejects(
      h.database.db.transaction().execute(async (trx) => {
        await notify(trx, h.clock, notice([u.userId]));
        throw new Error('abort');
      }),
    );
    assert.equal((await list(u.session)).json().data.length, 0);
  });
});
