import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createTestApp, as, firstError, type TestApp } from '../helpers/harness.js';
import { statementsWhile } from '../helpers/statements.js';
import { waitFor } from '../helpers/wait.js';
import { openSse, type SseStream } from '../helpers/sse.js';
import { notify } from '../../src/notifications/service.js';

/**
 * Issue 48, item 6: one session opened 6,549 streams, each with its own poller. Streams are now
 * capped per user and per process (WSP_STREAMS_PER_USER, WSP_STREAMS_PER_PROCESS: 429 with a code
 * of its own, Retry-After and the limit in metadata), and every stream of a process is served by
 * one poller, whose statements do not grow with the number of streams.
 */
const apps: TestApp[] = [];
after(async () => {
  for (const app of apps) await app.close();
});

async function appWith(streams: { perUser: number; perProcess: number }): Promise<{ h: TestApp; url: string }> {
  const h = await createTestApp({ config: { streams } });
  apps.push(h);
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return { h, url: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/v1/notifications/stream` };
}

const notice = (h: TestApp, userIds: string[], title: string) =>
  notify(h.database.db, h.clock, { userIds, type: 'machine_expiry', resource_type: 'machine', resource_id: 'mch_x', title, body: 'b', severity: 'info', context: {} });

async function user(h: TestApp, workspaceId: string): Promise<{ userId: string; session: string }> {
  const { user_id } = await h.admin.createUser({ name: 'streamer' });
  await h.admin.addMember(workspaceId, user_id, 'member');
  return { userId: user_id, session: (await h.admin.createSession(user_id)).session_token };
}

/** The refusal of a stream past a limit: 429, its code, Retry-After, and the limit named in metadata. */
async function assertRefused(stream: SseStream, code: number, quota: string, limit: number): Promise<void> {
  if (stream.status !== 429) stream.close();
  assert.equal(stream.status, 429, `a stream past the limit (${quota} ${limit}) was answered ${stream.status}`);
  await stream.ended;
  assert.equal(stream.headers['retry-after'], '5');
  assert.match(String(stream.headers['content-type']), /^application\/json/);
  const error = firstError(JSON.parse(stream.text));
  assert.equal(error.code, code);
  assert.deepEqual(error.metadata, { quota, limit: String(limit), used: String(limit) });
  assert.match(error.message, quota === 'streams_per_user' ? /WSP_STREAMS_PER_USER=2/ : /WSP_STREAMS_PER_PROCESS=3/);
}

/** Opens a stream once a slot is free: a refused one is retried, as a client told Retry-After would (sooner here). */
const openWhenFree = (url: string, headers: Record<string, string>) =>
  waitFor(
    'a free stream slot',
    async () => {
      const stream = await openSse(url, headers);
      if (stream.status === 200) return stream;
      await stream.ended;
      return null;
    },
    { timeoutMs: 10_000, intervalMs: 50 },
  );

describe('caps', () => {
  test('per user (WSP_STREAMS_PER_USER=2): a third stream of the user is 429 (7500), whatever the session; other users are served; a slot frees when a stream closes', async () => {
    const { h, url } = await appWith({ perUser: 2, perProcess: 100 });
    const s = await h.seed();
    const otherSession = (await h.admin.createSession(s.owner.userId)).session_token;
    const open = [await openSse(url, as(s.owner.session)), await openSse(url, as(otherSession))];
    try {
      assert.deepEqual(
        open.map((x) => x.status),
        [200, 200],
      );
      await assertRefused(await openSse(url, as(s.owner.session)), 7500, 'streams_per_user', 2);
      await assertRefused(await openSse(url, as(otherSession)), 7500, 'streams_per_user', 2);
      const another = await openSse(url, as(s.admin.session));
      assert.equal(another.status, 200, 'another user is not held back by this one');
      open.push(another);
      open[0]!.close();
      open.push(await openWhenFree(url, as(s.owner.session)));
      await assertRefused(await openSse(url, as(s.owner.session)), 7500, 'streams_per_user', 2);
    } finally {
      for (const x of open) x.close();
    }
  });

  test('per process (WSP_STREAMS_PER_PROCESS=3): a fourth stream, of anyone, is 429 (7501); a slot frees when a stream closes', async () => {
    const { h, url } = await appWith({ perUser: 2, perProcess: 3 });
    const s = await h.seed();
    const open = [await openSse(url, as(s.owner.session)), await openSse(url, as(s.owner.session)), await openSse(url, as(s.admin.session))];
    try {
      assert.deepEqual(
        open.map((x) => x.status),
        [200, 200, 200],
      );
      await assertRefused(await openSse(url, as(s.member.session)), 7501, 'streams_per_process', 3);
      open[2]!.close();
      open.push(await openWhenFree(url, as(s.member.session)));
      await assertRefused(await openSse(url, as(s.admin.session)), 7501, 'streams_per_process', 3);
    } finally {
      for (const x of open) x.close();
    }
  });

  test('the OpenAPI document lists the 429 of the stream with both codes', async () => {
    const { h } = await appWith({ perUser: 2, perProcess: 3 });
    const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const described = doc.paths['/v1/notifications/stream'].get.responses['429'].description as string;
    assert.match(described, /7500/);
    assert.match(described, /7501/);
    assert.match(described, /Retry-After/);
  });
});

describe('one poller for every stream of a process', () => {
  test('a notice reaches 25 streams (5 users, 5 streams each) with no more notification statements than looks: the look does not grow with the streams', async (t) => {
    const { h, url } = await appWith({ perUser: 10, perProcess: 100 });
    const s = await h.seed();
    const users = [s.owner, s.admin, s.member, await user(h, s.workspaceId), await user(h, s.workspaceId)];
    const streams: SseStream[] = [];
    try {
      for (const u of users) for (let i = 0; i < 5; i++) streams.push(await openSse(url, as(u.session)));
      assert.ok(streams.every((x) => x.status === 200));
      const everyone = users.map((u) => u.userId);
      // Every stream has had its first look (it sends only what comes after it connected).
      await notice(h, everyone, 'warm-up');
      await waitFor('the warm-up notice on every stream', () => streams.every((x) => x.events.some((e) => e.data.title === 'warm-up')), { timeoutMs: 10_000, intervalMs: 20 });
      const { sql } = await statementsWhile(h.database.db, async () => {
        await notice(h, everyone, 'counted');
        await waitFor('the counted notice on every stream', () => streams.every((x) => x.events.some((e) => e.data.title === 'counted')), { timeoutMs: 10_000, intervalMs: 20 });
      });
      const reads = (table: string) => sql.filter((q) => /^\s*select/i.test(q) && new RegExp(`from "${table}"`).test(q)).length;
      const notifications = reads('notifications');
      const sessions = reads('sessions');
      const memberships = reads('memberships');
      t.diagnostic(`25 streams, 5 users: ${notifications} notification reads, ${sessions} session checks, ${memberships} membership checks until all had the notice`);
      // One look a tick, each one statement for all the streams' users and one check of all their
      // sessions; with a poller per stream every stream would have read at least once (25).
      assert.ok(notifications >= 1 && notifications <= 3, `${notifications} notification reads`);
      assert.ok(notifications <= sessions, `one credential check a look: ${sessions} session reads for ${notifications} looks`);
      assert.ok(memberships <= sessions + 1, `${memberships} membership reads`);
      assert.ok(
        streams.every((x) => x.events.filter((e) => e.data.title === 'counted').length === 1),
        'each stream had it once',
      );
    } finally {
      for (const x of streams) x.close();
    }
  });
});
