import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { loadConfig, ConfigError } from '../../src/config.js';
import { buildApp } from '../../src/app.js';

/**
 * docs/spec-gaps.md, "Conventions": failed authentications are rate limited per client address (30 a minute, then
 * 429 with Retry-After until the window ends; requests that authenticate are neither counted
 * nor refused); WSP_RATE_LIMIT_PER_MINUTE, when set, limits requests per credential.
 */
const DEFAULT_FAILURES = loadConfig({}).authFailuresPerMinute;

describe('failed authentication, per client address', () => {
  const h = useTestApp({ config: { authFailuresPerMinute: DEFAULT_FAILURES } });
  const s = h.seeded;

  const from = (ip: string, authorization?: string, url = '/v1/me') => h.app.inject({ method: 'GET', url, remoteAddress: ip, headers: authorization ? { authorization } : {} });

  test('the default is 30 failures a minute', () => {
    assert.equal(DEFAULT_FAILURES, 30);
  });

  test('30 failures are 401; the 31st and later are 429 (7007) with Retry-After until the window ends', async () => {
    const ip = '10.0.0.1';
    // Align to a fresh window: the first failure starts it.
    const start = Math.floor(h.clock.nowMs() / 1000);
    const kinds = [undefined, 'Bearer nope', `Bearer ${'Z'.repeat(32)}`, 'Basic abc', `Bearer sk_svc_${'A'.repeat(38)}`];
    for (let i = 0; i < 30; i++) {
      const res = await from(ip, kinds[i % kinds.length]);
      assert.equal(res.statusCode, 401, `failure ${i + 1}`);
    }
    h.clock.advanceSeconds(20);
    const limited = await from(ip, 'Bearer nope');
    assert.equal(limited.statusCode, 429, limited.body);
    const e = firstError(limited.json());
    assert.equal(e.code, 7007);
    const elapsed = Math.floor(h.clock.nowMs() / 1000) - start;
    assert.equal(limited.headers['retry-after'], String(60 - elapsed));
    assert.equal(e.metadata?.retry_after, String(60 - elapsed));
    assert.match(String(limited.headers['x-request-id']), /.+/);

    // A credential that works is not refused, and does not count.
    for (let i = 0; i < 5; i++) assert.equal((await from(ip, `Bearer ${s.owner.session}`)).statusCode, 200);
    assert.equal((await from(ip, `Bearer ${s.apiToken}`, '/v1/api_tokens')).statusCode, 200);
    // Unauthenticated routes are not limited.
    assert.equal((await from(ip, 'Bearer nope', '/healthz')).statusCode, 200);
    // Another address is not affected.
    assert.equal((await from('10.0.0.2', 'Bearer nope')).statusCode, 401);

    h.clock.advanceSeconds(60 - elapsed - 1);
    assert.equal((await from(ip, 'Bearer nope')).statusCode, 429, 'one second before the window ends');
    assert.equal((await from(ip, 'Bearer nope')).headers['retry-after'], '1');
    h.clock.advanceSeconds(1);
    assert.equal((await from(ip, 'Bearer nope')).statusCode, 401, 'a new window');
  });

  test('successful requests never count toward the limit', async () => {
    const ip = '10.0.0.3';
    for (let i = 0; i < 100; i++) assert.equal((await from(ip, `Bearer ${s.member.session}`)).statusCode, 200);
    for (let i = 0; i < 30; i++) assert.equal((await from(ip, 'Bearer nope')).statusCode, 401);
    assert.equal((await from(ip, 'Bearer nope')).statusCode, 429);
  });

  test('the notification endpoints answer 429 in the envelope too (their special body is for 401 only)', async () => {
    const ip = '10.0.0.4';
    for (let i = 0; i < 30; i++) assert.equal((await from(ip, 'Bearer nope', '/v1/notifications')).statusCode, 401);
    const res = await from(ip, 'Bearer nope', '/v1/notifications');
    assert.equal(res.statusCode, 429);
    assert.equal(firstError(res.json()).code, 7007);
  });
});

describe('WSP_RATE_LIMIT_PER_MINUTE: a general limit per user (all their sessions and JWTs) and per API token', () => {
  const h = useTestApp({ config: { rateLimitPerMinute: 5 } });
  const s = h.seeded;

  const call = (credential: string) => h.app.inject({ method: 'GET', url: '/v1/me', headers: as(credential) });

  test('the 6th request of a user in a minute is 429 with Retry-After, from any of their sessions; other users and tokens are independent', async () => {
    h.clock.advanceSeconds(0);
    for (let i = 0; i < 5; i++) assert.equal((await call(s.owner.session)).statusCode, 200, `request ${i + 1}`);
    const res = await call(s.owner.session);
    assert.equal(res.statusCode, 429);
    assert.equal(firstError(res.json()).code, 7007);
    assert.ok(Number(res.headers['retry-after']) >= 1 && Number(res.headers['retry-after']) <= 60);
    assert.equal((await call(s.admin.session)).statusCode, 200);
    assert.equal((await call(s.apiToken)).statusCode, 200);
    // Another session of the same user is the same person's budget: minting sessions does not multiply it.
    const { session_token } = await h.admin.createSession(s.owner.userId);
    assert.equal((await call(session_token)).statusCode, 429);
    h.clock.advanceSeconds(Number(res.headers['retry-after']));
    assert.equal((await call(s.owner.session)).statusCode, 200, 'the next window');
  });

  test('unset, there is no general limit', async () => {
    const free = await createTestApp();
    try {
      const fs = await free.seed();
      for (let i = 0; i < 80; i++) {
        assert.equal((await free.app.inject({ method: 'GET', url: '/v1/me', headers: as(fs.apiToken) })).statusCode, 200);
      }
    } finally {
      await free.close();
    }
  });

  test('the setting must be a positive integer', () => {
    assert.equal(loadConfig({ WSP_RATE_LIMIT_PER_MINUTE: '120' }).rateLimitPerMinute, 120);
    assert.equal(loadConfig({}).rateLimitPerMinute, undefined);
    for (const bad of ['0', '-1', 'abc', '1.5']) assert.throws(() => loadConfig({ WSP_RATE_LIMIT_PER_MINUTE: bad }), ConfigError, bad);
    assert.equal(loadConfig({ WSP_AUTH_FAILURES_PER_MINUTE: '5' }).authFailuresPerMinute, 5);
    assert.throws(() => loadConfig({ WSP_AUTH_FAILURES_PER_MINUTE: '0' }), ConfigError);
  });
});

describe('WSP_RATE_LIMIT_PER_MINUTE is shared: per credential and per workspace, across server instances, with RateLimit-* headers', () => {
  let other: Awaited<ReturnType<typeof buildApp>>;
  const h = useTestApp({
    config: { rateLimitPerMinute: 6 },
    setup: async () => {
      // A second server instance on the same database: the budget is the database's, not a process's.
      other = await buildApp({ config: h.config, database: h.database, clock: h.clock, logger: false });
    },
    teardown: async () => {
      await other.close();
    },
  });
  const s = h.seeded;

  test('every answer shows the limit, what is left and when the window ends; 429 past it, alternating between instances', async () => {
    const apps = [h.app, other];
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await apps[i % 2]!.inject({ method: 'GET', url: '/v1/me', headers: as(s.admin.session) });
      assert.equal(res.statusCode, 200, `request ${i + 1}`);
      assert.equal(res.headers['ratelimit-limit'], '6');
      const reset = Number(res.headers['ratelimit-reset']);
      assert.ok(reset >= 1 && reset <= 60, String(reset));
      remaining.push(String(res.headers['ratelimit-remaining']));
    }
    assert.deepEqual(remaining, ['5', '4', '3', '2', '1', '0']);
    const refused = await other.inject({ method: 'GET', url: '/v1/me', headers: as(s.admin.session) });
    assert.equal(refused.statusCode, 429);
    assert.equal(firstError(refused.json()).code, 7007);
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.equal(refused.headers['retry-after'], refused.headers['ratelimit-reset']);
    const missing = await h.app.inject({ method: 'GET', url: '/v1/secrets/sec_nope', headers: as(s.member.session, s.workspaceId) });
    assert.equal(missing.statusCode, 404);
    assert.ok(missing.headers['ratelimit-limit'], 'errors carry the headers too');
  });

  test("a workspace's credentials share its budget: tokens and people of one workspace together, another workspace apart", async () => {
    h.clock.advanceSeconds(61);
    const second = (await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'second' } })).json().token as string;
    h.clock.advanceSeconds(61);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await [h.app, other][i % 2]!.inject({ method: 'GET', url: '/v1/secrets', headers: as(i % 2 ? second : s.apiToken) });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) assert.match(firstError(res.json()).message, /all the credentials of this workspace/);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429], 'six in the workspace, whichever token and instance');
    const elsewhere = await h.seed('Elsewhere');
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as(elsewhere.apiToken) })).statusCode, 200);
  });

  test('ended windows are forgotten by the hourly maintenance', async () => {
    h.clock.advanceSeconds(61);
    const before = await h.database.db.selectFrom('request_limits').select('key').execute();
    assert.ok(before.length > 0);
    h.clock.advanceSeconds(3601);
    await h.app.jobs.runDue();
    assert.deepEqual(await h.database.db.selectFrom('request_limits').select('key').execute(), []);
  });

  test('unset: no RateLimit headers', async () => {
    const free = await createTestApp();
    try {
      const fs = await free.seed();
      const res = await free.app.inject({ method: 'GET', url: '/v1/me', headers: as(fs.apiToken) });
      assert.equal(res.headers['ratelimit-limit'], undefined);
    } finally {
      await free.close();
    }
  });
});
