import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, generateKeyPair, exportSPKI, type CryptoKey } from 'jose';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { createJwtVerifier } from '../../src/auth/jwt.js';
import { decide, poll, startLogin } from '../oauth/device-helpers.js';

/**
 * docs/spec-gaps.md, "Accounts and sign-in", the session parts (issue 15, item 5): a person lists the sessions they hold and
 * ends any of them; sessions end at an absolute lifetime whatever the use; one user holds a
 * bounded number; a device login approved with a JWT ends no later than that JWT.
 */
const ISS = 'https://idp.sessions.test';
const AUD = 'wsp';
const DAY = 86_400;
let jwtKey: CryptoKey;

const h = useTestApp(async () => {
  const pair = await generateKeyPair('ES256');
  jwtKey = pair.privateKey;
  const verifyJwt = await createJwtVerifier({ publicKey: await exportSPKI(pair.publicKey), issuer: ISS, audience: AUD }, { nowMs: () => h.clock.nowMs() });
  return {
    verifyJwt,
    config: { sessions: { maxSeconds: 90 * DAY, perUser: 5 } },
  };
});
const s = h.seeded;

const now = () => Math.floor(h.clock.nowMs() / 1000);
const list = (credential: string) => h.app.inject({ method: 'GET', url: '/v1/sessions', headers: as(credential) });
const revoke = (credential: string, id: string) => h.app.inject({ method: 'DELETE', url: `/v1/sessions/${id}`, headers: as(credential) });
const me = (credential: string) => h.app.inject({ method: 'GET', url: '/v1/me', headers: as(credential) });

async function freshUser(sessions = 1) {
  const { user_id } = await h.admin.createUser({ name: 'sess' });
  await h.admin.addMember(s.workspaceId, user_id, 'member');
  const tokens: string[] = [];
  for (let i = 0; i < sessions; i++) tokens.push((await h.admin.createSession(user_id)).session_token);
  return { userId: user_id, tokens };
}

function jwtFor(sub: string, lifetime: number) {
  const iat = now();
  return new SignJWT({ sub })
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(ISS)
    .setAudience(AUD)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetime)
    .sign(jwtKey);
}

describe('GET /v1/sessions and DELETE /v1/sessions/{id}', () => {
  test("lists the caller's own live sessions with how and when, the calling one marked current; never a token", async () => {
    const u = await freshUser(2);
    const res = await list(u.tokens[1]!);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.data.length, 2);
    assert.equal(body.has_more, false);
    for (const item of body.data) {
      assert.deepEqual(Object.keys(item).sort(), ['created_at', 'current', 'expires_at', 'id', 'ip', 'issued_by', 'last_used_at', 'user_agent']);
      assert.equal(item.issued_by, 'operator');
      assert.equal(item.expires_at, now() + 30 * DAY, 'idle expiry first');
    }
    assert.deepEqual(body.data.map((x: { current: boolean }) => x.current).sort(), [false, true]);
    assert.ok(!res.body.includes(u.tokens[0]!) && !res.body.includes(u.tokens[1]!));
    // Another user's sessions are not in it.
    const ids = body.data.map((x: { id: string }) => x.id);
    const other = (await list(s.member.session)).json().data.map((x: { id: string }) => x.id);
    assert.ok(other.every((id: string) => !ids.includes(id)));
  });

  test('pages newest first with the usual cursor', async () => {
    const u = await freshUser(3);
    const first = await h.app.inject({ method: 'GET', url: '/v1/sessions?limit=2', headers: as(u.tokens[0]!) });
    assert.equal(first.json().data.length, 2);
    assert.equal(first.json().has_more, true);
    const second = await h.app.inject({ method: 'GET', url: `/v1/sessions?limit=2&cursor=${first.json().next_cursor}`, headers: as(u.tokens[0]!) });
    assert.equal(second.json().data.length, 1);
    const ids = [...first.json().data, ...second.json().data].map((x: { id: string }) => x.id);
    assert.deepEqual(ids, [...ids].sort().reverse());
  });

  test('revoking one of them: 204, its token is refused from the next request; the others still work', async () => {
    const u = await freshUser(2);
    const listed = (await list(u.tokens[0]!)).json().data as Array<{ id: string; current: boolean }>;
    const other = listed.find((x) => !x.current)!;
    const res = await revoke(u.tokens[0]!, other.id);
    assert.equal(res.statusCode, 204);
    assert.equal((await me(u.tokens[1]!)).statusCode, 401);
    assert.equal((await me(u.tokens[0]!)).statusCode, 200);
    // A bare id is the same session; gone now.
    assert.equal((await revoke(u.tokens[0]!, other.id.replace(/^ses_/, ''))).statusCode, 404);
  });

  test("another user's session is 404 and stays alive; an API token has no sessions (403 7024)", async () => {
    const a = await freshUser();
    const b = await freshUser();
    const bSession = (await list(b.tokens[0]!)).json().data[0].id;
    const res = await revoke(a.tokens[0]!, bSession);
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7002);
    assert.equal((await me(b.tokens[0]!)).statusCode, 200);
    const byToken = await list(s.apiToken);
    assert.equal(byToken.statusCode, 403);
    assert.equal(firstError(byToken.json()).code, 7024);
  });

  test('DELETE /v1/sessions/current still ends the calling session', async () => {
    const u = await freshUser();
    assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(u.tokens[0]!) })).statusCode, 204);
    assert.equal((await me(u.tokens[0]!)).statusCode, 401);
  });
});

describe('lifetimes and caps', () => {
  test('the absolute lifetime: used every 29 days, a session still ends 90 days after it was made', async () => {
    const u = await freshUser();
    const made = now();
    for (let day = 29; day < 90; day += 29) {
      h.clock.advanceSeconds(29 * DAY);
      assert.equal((await me(u.tokens[0]!)).statusCode, 200, `day ${day}`);
    }
    const listed = (await list(u.tokens[0]!)).json().data[0];
    assert.equal(listed.expires_at, made + 90 * DAY, 'the absolute end is the earliest now');
    h.clock.set((made + 90 * DAY) * 1000);
    assert.equal((await me(u.tokens[0]!)).statusCode, 401);
  });

  test('one user holds at most WSP_SESSIONS_PER_USER_MAX sessions: a new one ends the least recently used', async () => {
    const u = await freshUser(5);
    h.clock.advanceSeconds(120);
    // The oldest is used again: the second-made is now the least recently used.
    assert.equal((await me(u.tokens[0]!)).statusCode, 200);
    const sixth = (await h.admin.createSession(u.userId)).session_token;
    assert.equal((await me(sixth)).statusCode, 200);
    assert.equal((await me(u.tokens[0]!)).statusCode, 200);
    assert.equal((await me(u.tokens[1]!)).statusCode, 401);
    const count = await h.database.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', u.userId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 5);
  });

  test("a device login approved with a JWT ends when that JWT does; its session says device, the device's agent and address", async () => {
    const u = await freshUser();
    const jwt = await jwtFor(u.userId, 600);
    const started = await startLogin(h);
    assert.equal((await decide(h, 'approve', jwt, started.user_code)).statusCode, 200);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'wsp-cli/1.0 (test)' },
      payload: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'wsp-cli', device_code: started.device_code }).toString(),
      remoteAddress: '198.51.100.4',
    });
    assert.equal(res.statusCode, 200, res.body);
    const token = res.json().access_token as string;
    const listed = (await list(token)).json().data.find((x: { current: boolean }) => x.current);
    assert.equal(listed.issued_by, 'device');
    assert.equal(listed.user_agent, 'wsp-cli/1.0 (test)');
    assert.equal(listed.ip, '198.51.100.4');
    assert.equal(listed.expires_at, now() + 600, "the JWT's exp, not 30 days");
    h.clock.advanceSeconds(599);
    assert.equal((await me(token)).statusCode, 200);
    h.clock.advanceSeconds(1);
    assert.equal((await me(token)).statusCode, 401);
  });

  test('a device login approved with a session lives as a session does (30 days idle)', async () => {
    const u = await freshUser();
    const started = await startLogin(h);
    assert.equal((await decide(h, 'approve', u.tokens[0]!, started.user_code)).statusCode, 200);
    const token = (await poll(h, started.device_code)).json().access_token as string;
    const listed = (await list(token)).json().data.find((x: { current: boolean }) => x.current);
    assert.equal(listed.expires_at, now() + 30 * DAY);
  });
});

describe('operator: ending sessions and memberships', () => {
  test("revoking one session, then all of a user's: their tokens are refused on the next request", async () => {
    const u = await freshUser(3);
    const [first] = (await list(u.tokens[0]!)).json().data as Array<{ id: string }>;
    assert.deepEqual(await h.admin.revokeSession(first!.id), { session_id: first!.id, revoked: 1 });
    await assert.rejects(h.admin.revokeSession(first!.id), /unknown session/);
    assert.deepEqual(await h.admin.revokeSessionsOf(u.userId), { user_id: u.userId, revoked: 2 });
    for (const t of u.tokens) assert.equal((await me(t)).statusCode, 401);
  });

  test('removing a member ends their access to the workspace on the next request; the last owner stays', async () => {
    const u = await freshUser();
    const inWorkspace = () => h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(u.tokens[0]!, s.workspaceId) });
    assert.notEqual((await inWorkspace()).statusCode, 403);
    assert.deepEqual(await h.admin.removeMember(s.workspaceId, u.userId), { workspace_id: s.workspaceId, user_id: u.userId, removed: true });
    const res = await inWorkspace();
    assert.equal(res.statusCode, 403);
    assert.equal(firstError(res.json()).code, 7022);
    await assert.rejects(h.admin.removeMember(s.workspaceId, u.userId), /is not a member/);

    const { workspace_id } = await h.admin.createWorkspace('Solo');
    await h.admin.addMember(workspace_id, u.userId, 'owner');
    await assert.rejects(h.admin.removeMember(workspace_id, u.userId), /last owner/);
    await h.admin.addMember(workspace_id, s.owner.userId, 'owner');
    assert.equal((await h.admin.removeMember(workspace_id, u.userId)).removed, true, 'with another owner it may go');
  });
});
