import { test, describe, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { SignJWT, generateKeyPair, exportSPKI, type CryptoKey } from 'jose';
import { createTestApp, as, userWithPassword, type TestApp, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { adminJson, runWsp, startServer, type ServerProcess } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { openSse, type SseStream } from '../helpers/sse.js';
import { notify } from '../../src/notifications/service.js';
import { loadConfig } from '../../src/config.js';

/**
 * Issue 48, item 5: a live notification stream (docs/spec-gaps.md, "Live notifications") ends within a few seconds of its
 * credential ending: the session revoked (by the user, through another instance, by an operator)
 * or expired (idle, absolute lifetime), the JWT past its exp, the user's memberships changed.
 * Before, a stream kept sending titles and bodies, kept alive by its comments, until the client
 * left. Over real HTTP: the point is the open connection.
 */
let base: string;
const servers: ServerProcess[] = [];

/** How long a stream may outlive its credential: a tick (1 s) plus a loaded machine's delays. */
const FEW_SECONDS = 10_000;

const h = useTestApp({
  setup: async () => {
    base = await listen(h);
  },
  teardown: async () => {
    for (const server of servers) await server.stop();
  },
});
const s = h.seeded;

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
}

const notice = (app: TestApp, userId: string, title: string) =>
  notify(app.database.db, app.clock, { userIds: [userId], type: 'machine_expiry', resource_type: 'machine', resource_id: 'mch_x', title, body: 'the body', severity: 'info', context: {} });

/** Opens a stream and proves it delivers (a notice made now arrives), so its end is the credential's doing. */
async function liveStream(app: TestApp, url: string, userId: string, headers: Record<string, string>): Promise<SseStream> {
  const stream = await openSse(`${url}/v1/notifications/stream`, headers);
  assert.equal(stream.status, 200, stream.text);
  const title = `before ${Math.random()}`;
  await notice(app, userId, title);
  await waitFor(`the stream's first notice (${title})`, () => stream.events.some((e) => e.data.title === title), { timeoutMs: FEW_SECONDS });
  return stream;
}

/** Waits for the server to end the stream, and says how long it took. */
async function endsSoon(t: TestContext, stream: SseStream, what: string): Promise<void> {
  const started = Date.now();
  try {
    await waitFor(`the stream to end after ${what}`, () => stream.isEnded(), { timeoutMs: FEW_SECONDS, intervalMs: 20 });
  } finally {
    stream.close();
  }
  t.diagnostic(`${what}: the stream ended ${Date.now() - started} ms later`);
  assert.ok(
    stream.comments.some((c) => c.startsWith('closed: ')),
    `a closing comment says why: ${JSON.stringify(stream.comments)}`,
  );
}

/** A fresh member of the seed's workspace with a session of its own. */
async function someone(role: 'admin' | 'member' = 'member'): Promise<{ userId: string; session: string }> {
  const { user_id } = await h.admin.createUser({ name: 'streamer' });
  await h.admin.addMember(s.workspaceId, user_id, role);
  const { session_token } = await h.admin.createSession(user_id);
  return { userId: user_id, session: session_token };
}

const sessionIdOf = async (token: string): Promise<string> =>
  ((await h.app.inject({ method: 'GET', url: '/v1/sessions', headers: as(token) })).json().data as { id: string; current: boolean }[]).find((x) => x.current)!.id;

describe('revoked sessions end their streams', () => {
  test('DELETE /v1/sessions/current with a bearer session: its stream ends within a few seconds; another session of the same user keeps its own', async (t) => {
    const p = await someone();
    const other = (await h.admin.createSession(p.userId)).session_token;
    const stream = await liveStream(h, base, p.userId, as(p.session));
    const kept = await liveStream(h, base, p.userId, as(other));
    try {
      assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(p.session) })).statusCode, 204);
      await endsSoon(t, stream, 'DELETE /v1/sessions/current');
      await notice(h, p.userId, 'after the sign-out');
      await waitFor('the other session’s stream to go on', () => kept.events.some((e) => e.data.title === 'after the sign-out'), { timeoutMs: FEW_SECONDS });
      assert.ok(!stream.events.some((e) => e.data.title === 'after the sign-out'));
      assert.ok(!kept.isEnded());
    } finally {
      stream.close();
      kept.close();
    }
  });

  test('DELETE /v1/sessions/current with the wsp_session cookie (a browser’s EventSource): its stream ends', async (t) => {
    const password = 'correct horse battery staple';
    const p = await userWithPassword(h, password, { workspaceId: s.workspaceId, role: 'member' });
    const signIn = await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: p.email, password, cookie: true } });
    assert.equal(signIn.statusCode, 201, signIn.body);
    const setCookie = signIn.headers['set-cookie'];
    const cookie = String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0]!;
    const csrf = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie } })).json().csrf_token as string;
    const stream = await liveStream(h, base, p.userId, { cookie });
    try {
      assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: { cookie, 'x-csrf-token': csrf } })).statusCode, 204);
      await endsSoon(t, stream, 'signing out the cookie session');
    } finally {
      stream.close();
    }
  });

  test('`wsp admin session revoke --session` (an operator’s command, its own process): the stream ends', async (t) => {
    const p = await someone();
    const stream = await liveStream(h, base, p.userId, as(p.session));
    try {
      const out = await runWsp(['admin', 'session', 'revoke', '--session', await sessionIdOf(p.session), '--json'], h.dbEnv);
      assert.equal(out.code, 0, out.stderr);
      await endsSoon(t, stream, 'wsp admin session revoke --session');
    } finally {
      stream.close();
    }
  });

  test('the admin service’s `session revoke --user --all`: every stream of the user ends, whatever its session', async (t) => {
    const p = await someone();
    const second = (await h.admin.createSession(p.userId)).session_token;
    const streams = [await liveStream(h, base, p.userId, as(p.session)), await liveStream(h, base, p.userId, as(second))];
    try {
      assert.equal((await h.admin.revokeSessionsOf(p.userId)).revoked, 2);
      for (const stream of streams) await endsSoon(t, stream, 'session revoke --user --all');
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  test('a stream opened on one instance (a `wsp serve` process) ends when its session is revoked through another instance on the same database', async (t) => {
    const server = await startServer({ ...h.dbEnv, WSP_MASTER_KEY: h.config.masterKey! });
    servers.push(server);
    const p = await someone();
    // Made by a process on the real clock, as the server judges it (this file's app runs on a moved clock).
    const { session_token } = await adminJson(['session', 'create', '--user', p.userId], h.dbEnv);
    const stream = await liveStream(h, server.url, p.userId, as(session_token!));
    try {
      assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(session_token!) })).statusCode, 204);
      await endsSoon(t, stream, 'revoking through the other instance');
    } finally {
      stream.close();
    }
  });
});

describe('a change of memberships ends the stream: the client reconnects with its current rights', () => {
  test('removed from a workspace (DELETE .../members/{user}): the removed member’s stream ends; the remover’s goes on', async (t) => {
    const p = await someone();
    const removed = await liveStream(h, base, p.userId, as(p.session));
    const owners = await liveStream(h, base, s.owner.userId, as(s.owner.session));
    try {
      const res = await h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${s.workspaceId}/members/${p.userId}`, headers: as(s.owner.session, s.workspaceId) });
      assert.equal(res.statusCode, 204, res.body);
      await endsSoon(t, removed, 'the member’s removal');
      // The reconnect is served, with what the user may now see (no workspace).
      const again = await liveStream(h, base, p.userId, as(p.session));
      again.close();
      await notice(h, s.owner.userId, 'the owner still streams');
      await waitFor('the owner’s stream to go on', () => owners.events.some((e) => e.data.title === 'the owner still streams'), { timeoutMs: FEW_SECONDS });
      assert.ok(!owners.isEnded());
    } finally {
      removed.close();
      owners.close();
    }
  });

  test('another role (PATCH .../members/{user}) ends the stream; joining another workspace does not', async (t) => {
    const p = await someone('admin');
    const stream = await liveStream(h, base, p.userId, as(p.session));
    try {
      const side = await h.admin.createWorkspace('Side');
      await h.admin.addMember(side.workspace_id, p.userId, 'member');
      await notice(h, p.userId, 'after joining');
      await waitFor('the stream to go on after joining', () => stream.events.some((e) => e.data.title === 'after joining'), { timeoutMs: FEW_SECONDS });
      assert.ok(!stream.isEnded(), 'joining adds rights: the stream goes on');
      const res = await h.app.inject({ method: 'PATCH', url: `/v1/workspaces/${s.workspaceId}/members/${p.userId}`, headers: as(s.owner.session, s.workspaceId), payload: { role: 'member' } });
      assert.equal(res.statusCode, 200, res.body);
      await endsSoon(t, stream, 'the demotion');
    } finally {
      stream.close();
    }
  });
});

describe('credentials that run out end their streams (the app’s clock moved)', () => {
  const ISS = 'https://idp.example.test/';
  const AUD = 'workspace-platform';
  let cbase: string;
  let key: { publicKey: CryptoKey; privateKey: CryptoKey };

  const hc = useTestApp(async () => {
    key = await generateKeyPair('ES256', { extractable: true });
    return {
      config: { jwt: { publicKey: await exportSPKI(key.publicKey), issuer: ISS, audience: AUD, jwksUrl: undefined }, sessions: { ...loadConfig({}).sessions, maxSeconds: 3 * 86_400 } },
      setup: async () => {
        cbase = await listen(hc);
      },
    };
  });
  const sc = hc.seeded;

  const nowOf = () => Math.floor(hc.clock.nowMs() / 1000);

  test('a JWT’s exp passes: its stream ends; a JWT with a later exp keeps its own', async (t) => {
    const jwt = (exp: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
        .setIssuer(ISS)
        .setAudience(AUD)
        .setSubject(sc.member.userId)
        .setIssuedAt(nowOf() - 5)
        .setExpirationTime(exp)
        .sign(key.privateKey);
    const short = await liveStream(hc, cbase, sc.member.userId, as(await jwt(nowOf() + 60)));
    const long = await liveStream(hc, cbase, sc.member.userId, as(await jwt(nowOf() + 3600)));
    try {
      hc.clock.advanceSeconds(61);
      await endsSoon(t, short, 'the JWT’s exp');
      await notice(hc, sc.member.userId, 'for the longer JWT');
      await waitFor('the longer JWT’s stream to go on', () => long.events.some((e) => e.data.title === 'for the longer JWT'), { timeoutMs: FEW_SECONDS });
      hc.clock.advanceSeconds(3600);
      await endsSoon(t, long, 'the second JWT’s exp');
    } finally {
      short.close();
      long.close();
    }
  });

  test('a session past its absolute lifetime (WSP_SESSION_MAX_DAYS), and one idle past 30 days: each stream ends', async (t) => {
    // The absolute lifetime here is 3 days; kept in use, the session's idle expiry moves on, its lifetime does not.
    const used = (await hc.admin.createSession(sc.admin.userId)).session_token;
    const stream = await liveStream(hc, cbase, sc.admin.userId, as(used));
    try {
      for (let day = 1; day <= 2; day++) {
        hc.clock.advanceSeconds(86_400);
        assert.equal((await hc.app.inject({ method: 'GET', url: '/v1/me', headers: as(used) })).statusCode, 200);
      }
      await notice(hc, sc.admin.userId, 'on the second day');
      await waitFor('the stream to go on while the session lives', () => stream.events.some((e) => e.data.title === 'on the second day'), { timeoutMs: FEW_SECONDS });
      hc.clock.advanceSeconds(86_400 + 1);
      await endsSoon(t, stream, 'the session’s absolute lifetime');
    } finally {
      stream.close();
    }
    const idle = await createIdleApp();
    try {
      const stream2 = await liveStream(idle.app, idle.base, idle.seed.member.userId, as(idle.seed.member.session));
      try {
        idle.app.clock.advanceSeconds(30 * 86_400 + 1);
        await endsSoon(t, stream2, 'the session’s idle expiry');
      } finally {
        stream2.close();
      }
    } finally {
      await idle.app.close();
    }
  });
});

/** An app with the default session lifetime (90 days), so that the idle expiry (30 days) comes first. */
async function createIdleApp(): Promise<{ app: TestApp; seed: Seed; base: string }> {
  const app = await createTestApp();
  const seed = await app.seed();
  return { app, seed, base: await listen(app) };
}
