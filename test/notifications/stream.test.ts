import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { notify } from '../../src/notifications/service.js';
import { NotificationStreams } from '../../src/notifications/stream.js';
import { newId } from '../../src/shared/ids.js';
import { openSse } from '../helpers/sse.js';
import type { KyselyPlugin } from 'kysely';
import { liveSessionIds } from '../../src/sessions/service.js';
import { identity } from '../../src/identity/service.js';

/** GET /v1/notifications/stream (docs/spec-gaps.md, "Live notifications"): Server-Sent Events over real HTTP. */
let base: string;

const h = useTestApp({
  setup: async () => {
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  },
});
const s = h.seeded;

/** Opens a stream and parses what arrives. */
const open = openSse;

const notice = (userId: string, title: string) =>
  notify(h.database.db, h.clock, { userIds: [userId], type: 'machine_expiry', resource_type: 'machine', resource_id: 'mch_x', title, body: 'b', severity: 'info', context: {} });
const waitFor = async (what: string, check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('the stream', () => {
  test("a notification written by anyone (another instance, a job) reaches its user's stream once; another user's does not", async () => {
    const stream = await open(`${base}/v1/notifications/stream`, as(s.owner.session));
    try {
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      assert.equal(stream.headers['cache-control'], 'no-store');
      await notice(s.admin.userId, 'for the admin');
      await notice(s.owner.userId, 'for the owner');
      await waitFor('the owner’s event', () => stream.events.length >= 1);
      await new Promise((r) => setTimeout(r, 1500));
      assert.deepEqual(
        stream.events.map((e) => [e.event, e.data.title]),
        [['notification', 'for the owner']],
      );
      assert.equal(stream.events[0]!.id, stream.events[0]!.data.id);
    } finally {
      stream.close();
    }
  });

  test('Last-Event-ID resumes after that notification, and what the client holds is not sent again when a later look reaches back past it', async () => {
    await notice(s.member.userId, 'one');
    await notice(s.member.userId, 'two');
    await notice(s.member.userId, 'three');
    const listed = (await h.app.inject({ method: 'GET', url: '/v1/notifications', headers: as(s.member.session) })).json().data as { id: string; title: string }[];
    const one = listed.find((n) => n.title === 'one')!;
    const stream = await open(`${base}/v1/notifications/stream`, as(s.member.session, undefined, { 'last-event-id': one.id }));
    try {
      await waitFor('the two after it', () => stream.events.length >= 2);
      assert.deepEqual(
        stream.events.map((e) => e.data.title),
        ['two', 'three'],
      );
      // The looks after the first look back 30 s behind the newest sent, past 'one'.
      await notice(s.member.userId, 'four');
      await waitFor('the next one', () => stream.events.length >= 3);
      await notice(s.member.userId, 'five');
      await waitFor('the one after', () => stream.events.length >= 4);
      assert.deepEqual(
        stream.events.map((e) => e.data.title),
        ['two', 'three', 'four', 'five'],
      );
    } finally {
      stream.close();
    }
  });

  test("a resume with a backlog past one look (600) gets all of it, in order, once; another user's new notice is not held behind it", async () => {
    const { user_id: heavy } = await h.admin.createUser({ name: 'backlog' });
    const heavyToken = (await h.admin.createSession(heavy)).session_token;
    const rows = Array.from({ length: 600 }, (_, i) => ({
      id: newId('ntf'),
      user_id: heavy,
      type: 'machine_expiry',
      resource_type: 'machine',
      resource_id: 'mch_b',
      title: `n${i}`,
      body: 'b',
      severity: 'info',
      context: '{}',
      read_at: null,
      created_at: 1,
      dedupe_key: null,
    }));
    await h.database.db.insertInto('notifications').values(rows).execute();
    const ids = rows.map((r) => r.id).sort();
    const light = await open(`${base}/v1/notifications/stream`, as(s.member.session));
    const backlog = await open(`${base}/v1/notifications/stream`, as(heavyToken, undefined, { 'last-event-id': ids[0]! }));
    try {
      await notice(s.member.userId, 'not held back');
      await waitFor('the other user’s notice', () => light.events.some((e) => e.data.title === 'not held back'));
      await waitFor('the whole backlog', () => backlog.events.length >= 599, 10_000);
      assert.deepEqual(
        backlog.events.map((e) => e.id),
        ids.slice(1),
      );
      await notice(heavy, 'after the backlog');
      await waitFor('the next notice', () => backlog.events.length === 600);
      assert.equal(backlog.events[599]!.data.title, 'after the backlog');
    } finally {
      light.close();
      backlog.close();
    }
  });

  test("curl's Accept (*/*), text/*, and no Accept at all get the stream; a q=0 for the type is refused (406)", async () => {
    for (const accept of ['*/*', 'text/*', '', 'application/json, */*;q=0.1']) {
      const stream = await open(`${base}/v1/notifications/stream`, as(s.owner.session, undefined, { accept }));
      try {
        assert.equal(stream.status, 200, `Accept: ${accept || '(none)'}`);
        assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      } finally {
        stream.close();
      }
    }
    for (const accept of ['text/event-stream;q=0, */*', 'text/html', 'application/*']) {
      const refused = await h.app.inject({ method: 'GET', url: '/v1/notifications/stream', headers: as(s.owner.session, undefined, { accept }) });
      assert.equal(refused.statusCode, 406, accept);
      assert.equal(firstError(refused.json()).code, 7026);
    }
  });

  test('refusals: no credential 401, an API token 403 (7024), a malformed Last-Event-ID 422, no Accept: text/event-stream 406', async () => {
    const plain = await h.app.inject({ method: 'GET', url: '/v1/notifications/stream', headers: as(s.owner.session, undefined, { accept: 'application/json' }) });
    assert.equal(plain.statusCode, 406);
    assert.equal(firstError(plain.json()).code, 7026);
    assert.deepEqual(firstError(plain.json()).path, ['headers', 'accept']);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/notifications/stream' })).statusCode, 401);
    const token = await h.app.inject({ method: 'GET', url: '/v1/notifications/stream', headers: as(s.apiToken, undefined, { accept: 'text/event-stream' }) });
    assert.equal(token.statusCode, 403);
    assert.equal(firstError(token.json()).code, 7024);
    const bad = await h.app.inject({ method: 'GET', url: '/v1/notifications/stream', headers: as(s.owner.session, undefined, { 'last-event-id': 'not an id', accept: 'text/event-stream' }) });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(firstError(bad.json()).path, ['headers', 'last-event-id']);
  });
});

describe('timing, late commits and shutdown', () => {
  test('keep-alive comments; a notification committed late with an older id is still sent, once', async () => {
    const checks = { liveSessions: async (ids: readonly string[]) => new Set(ids), memberships: async () => new Map<string, string[]>() };
    const streams = new NotificationStreams({ db: h.database.db, clock: h.clock, checks, limits: { perUser: 10, perProcess: 10 } }, { pollMs: 50, keepAliveMs: 100, lookbackMs: 30_000 });
    const server = http.createServer((_req, res) => void streams.admit(s.admin.userId, { kind: 'session', sessionId: 'ses_x' }, null).then((slot) => streams.serve(slot, res)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const stream = await open(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {});
    try {
      const early = newId('ntf'); // made now, committed only after a later one
      await new Promise((r) => setTimeout(r, 5));
      await notice(s.admin.userId, 'committed first');
      await waitFor('the first', () => stream.events.length === 1);
      await h.database.db
        .insertInto('notifications')
        .values({
          id: early,
          user_id: s.admin.userId,
          type: 'machine_expiry',
          resource_type: 'machine',
          resource_id: 'mch_y',
          title: 'committed late',
          body: 'b',
          severity: 'info',
          context: '{}',
          read_at: null,
          created_at: 1,
          dedupe_key: null,
        })
        .execute();
      await waitFor(`the late one ${JSON.stringify(stream)}`, () => stream.events.length === 2);
      await waitFor('keep-alive comments', () => stream.comments.filter((c) => c === 'keep-alive').length >= 2);
      assert.deepEqual(
        stream.events.map((e) => e.data.title),
        ['committed first', 'committed late'],
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(stream.events.length, 2, 'each sent once');
    } finally {
      stream.close();
      streams.closeAll();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('the database away: the stream stays open on its keep-alives, sends nothing and ends nothing; back, what was made meanwhile arrives once, and a revocation is seen', async () => {
    // The poller's statements fail as a connection lost would, while `away`; the writes below go around it.
    const outage = { away: false, failed: 0 };
    const plugin: KyselyPlugin = {
      transformQuery: ({ node }) => {
        if (outage.away && /"name":"(notifications|sessions|memberships)"/.test(JSON.stringify(node))) {
          outage.failed++;
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
        }
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const db = h.database.db.withPlugin(plugin);
    const checks = { liveSessions: (ids: readonly string[], now: number) => liveSessionIds(db, ids, now, h.config.sessions), memberships: (ids: readonly string[]) => identity.membershipsOf(db, ids) };
    const streams = new NotificationStreams({ db, clock: h.clock, checks, limits: { perUser: 10, perProcess: 10 } }, { pollMs: 50, keepAliveMs: 100, lookbackMs: 30_000 });
    const { user_id } = await h.admin.createUser({ name: 'outage' });
    const token = (await h.admin.createSession(user_id)).session_token;
    const sessionId = ((await h.app.inject({ method: 'GET', url: '/v1/sessions', headers: as(token) })).json().data as { id: string }[])[0]!.id;
    const server = http.createServer((_req, res) => void streams.admit(user_id, { kind: 'session', sessionId }, null).then((slot) => streams.serve(slot, res)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const stream = await open(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {});
    try {
      await notice(user_id, 'before');
      await waitFor('the notice before the outage', () => stream.events.length === 1);
      outage.away = true;
      await notice(user_id, 'meanwhile');
      const keepAlives = stream.comments.length;
      await waitFor('keep-alives and failed looks during the outage', () => stream.comments.length >= keepAlives + 3 && outage.failed >= 3);
      assert.deepEqual(
        stream.events.map((e) => e.data.title),
        ['before'],
        'nothing is sent on a credential that could not be checked',
      );
      assert.ok(!stream.isEnded(), 'an outage ends no stream');
      outage.away = false;
      await waitFor('the notice made during the outage', () => stream.events.length === 2);
      const seen = stream.comments.length;
      await waitFor('more looks (a keep-alive each two)', () => stream.comments.length >= seen + 3);
      assert.deepEqual(
        stream.events.map((e) => e.data.title),
        ['before', 'meanwhile'],
        'each once',
      );
      await h.database.db.deleteFrom('sessions').where('id', '=', sessionId).execute();
      await waitFor('the stream to end with its session', () => stream.isEnded());
    } finally {
      stream.close();
      streams.closeAll();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('closing the server ends open streams at once instead of waiting for them', async () => {
    const own = await createTestApp();
    const seed = await own.seed();
    await own.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(own.app.server.address() as AddressInfo).port}/v1/notifications/stream`;
    const streams = await Promise.all([open(url, as(seed.owner.session)), open(url, as(seed.admin.session))]);
    assert.ok(streams.every((x) => x.status === 200));
    const started = Date.now();
    await own.close();
    await Promise.all(streams.map((x) => x.ended));
    assert.ok(Date.now() - started < 3000, `closed in ${Date.now() - started} ms`);
  });
});
