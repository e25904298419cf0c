import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, as, firstError, userWithPassword, type TestApp, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { loadConfig } from '../../src/config.js';
import { safeReturnTo } from '../../src/accounts/oidc.js';
import { oidcLoginStore } from '../../src/accounts/oidc-store.js';
import { sql } from 'kysely';

/**
 * Single sign-on end to end against a real OpenID provider on loopback (`oidc-provider`): the
 * platform's start redirect, the provider's login and consent, the callback, the cookie session.
 */
const PUBLIC_URL = 'http://localhost:8080';

let idp: TestProvider;
let open: TestApp;
let s: Seed;

const h = useTestApp(async () => {
  idp = await startProvider(`${PUBLIC_URL}/v1/auth/oidc/callback`);
  const oidc = { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, autoCreate: false };
  return {
    config: { publicUrl: PUBLIC_URL, oidc },
    seed: false,
    setup: async () => {
      open = await createTestApp({ config: { publicUrl: PUBLIC_URL, oidc: { ...oidc, autoCreate: true } } });
      s = await h.seed();
    },
  };
});
after(async () => {
  await open.close();
  await idp.close();
});

let n = 0;
/** An account at the provider. */
function account(claims: { email?: string; email_verified?: boolean; name?: string } = {}): string {
  const id = `acct-${++n}-${Date.now()}`;
  idp.accounts[id] = { email: `${id}@idp.example`, email_verified: true, name: `Account ${n}`, ...claims };
  return id;
}

/** The cookies a response sets, as `name=value` pairs by name. */
function setCookies(res: { headers: Record<string, unknown> }): Map<string, string> {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? (raw as string[]) : [String(raw)];
  return new Map(lines.map((l) => [l.slice(0, l.indexOf('=')), l]));
}
/** The `wsp_oidc=...` pair a start gave this browser: what its callback must carry. */
const bindingOf = (start: { headers: Record<string, unknown> }) => setCookies(start).get('wsp_oidc')!.split(';')[0]!;

/** A single sign-on started in one browser: its provider URL and the browser's binding cookie. */
async function startLogin(app: TestApp, returnTo?: string) {
  const start = await app.app.inject({ method: 'GET', url: `/v1/auth/oidc/start${returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`}` });
  assert.equal(start.statusCode, 302, start.body);
  return { start, binding: bindingOf(start), state: new URL(String(start.headers.location)).searchParams.get('state')! };
}

/**
 * The whole sign-in in one browser: start on the platform, the provider's pages, then the
 * platform's callback with the browser's cookies (its binding, and a session it already has).
 */
async function sso(app: TestApp, accountId: string, returnTo?: string, session?: string) {
  const { start, binding } = await startLogin(app, returnTo);
  const back = await idp.signIn(String(start.headers.location), accountId);
  assert.equal(back.origin + back.pathname, `${PUBLIC_URL}/v1/auth/oidc/callback`);
  const cookie = [binding, ...(session ? [session] : [])].join('; ');
  const callback = await app.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, headers: { cookie } });
  return { start, back, callback, binding };
}

/** The `wsp_session=...` pair a response set, or undefined. */
const sessionSet = (res: { headers: Record<string, unknown> }) => setCookies(res).get('wsp_session')?.split(';')[0];
const cookieOf = (res: { headers: Record<string, unknown> }) => {
  const c = sessionSet(res);
  assert.ok(c, `no wsp_session was set: ${JSON.stringify(res.headers['set-cookie'])}`);
  return c;
};
const meWith = (app: TestApp, cookie: string) => app.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie } });

describe('single sign-on with OpenID Connect', () => {
  test('the start redirects to the provider with the code flow, PKCE (S256), a state and a nonce; providers are listed', async () => {
    const start = await h.app.inject({ method: 'GET', url: '/v1/auth/oidc/start' });
    assert.equal(start.statusCode, 302);
    const url = new URL(String(start.headers.location));
    assert.equal(url.origin, idp.issuer);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('client_id'), idp.clientId);
    assert.equal(url.searchParams.get('redirect_uri'), `${PUBLIC_URL}/v1/auth/oidc/callback`);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(url.searchParams.get('state') && url.searchParams.get('nonce'));
    assert.match(url.searchParams.get('scope')!, /openid/);
    assert.deepEqual((await h.app.inject({ method: 'GET', url: '/v1/auth/providers' })).json(), { password: true, oidc: true, oidc_start_url: '/v1/auth/oidc/start' });
  });

  test('a user is found by verified email, then by the linked subject; the cookie session is issued by oidc; the browser goes back where it started', async () => {
    const email = `linked-${Date.now()}@idp.example`;
    const { user_id } = await h.admin.createUser({ name: 'Linked', email: email.toUpperCase() });
    await h.admin.addMember(s.workspaceId, user_id, 'member');
    const id = account({ email });
    const { callback } = await sso(h, id, '/device?user_code=ABCD-EFGH');
    assert.equal(callback.statusCode, 302, callback.body);
    assert.equal(callback.headers.location, '/device?user_code=ABCD-EFGH');
    assert.match(setCookies(callback).get('wsp_session')!, /^wsp_session=[A-Za-z0-9]{32}; Path=\/; HttpOnly; SameSite=Lax/);
    assert.match(setCookies(callback).get('wsp_oidc')!, /^wsp_oidc=; Path=\/v1\/auth\/oidc; HttpOnly; SameSite=Lax; Max-Age=0/, 'the binding is spent');
    const me = (await meWith(h, cookieOf(callback))).json();
    assert.equal(me.user.id, user_id);
    const sessions = (await h.app.inject({ method: 'GET', url: '/v1/sessions', headers: { cookie: cookieOf(callback) } })).json().data;
    assert.equal(sessions.find((x: { current: boolean }) => x.current).issued_by, 'oidc');

    // The email changes at the provider: the linked subject still finds the user.
    idp.accounts[id]!.email = `changed-${Date.now()}@idp.example`;
    const again = await sso(h, id);
    assert.equal(again.callback.headers.location, '/console/');
    assert.equal((await meWith(h, cookieOf(again.callback))).json().user.id, user_id);
  });

  test('a stranger is refused (403 7051) and nothing is made; an unverified email matching a user is a stranger too', async () => {
    const stranger = account();
    const { callback } = await sso(h, stranger);
    assert.equal(callback.statusCode, 403);
    assert.equal(firstError(callback.json()).code, 7051);
    assert.equal(sessionSet(callback), undefined);
    const users = await h.database.db.selectFrom('users').select('id').where('email_key', '=', idp.accounts[stranger]!.email!.toLowerCase()).execute();
    assert.equal(users.length, 0);

    const email = `unverified-${Date.now()}@idp.example`;
    await h.admin.createUser({ name: 'Owner of the address', email });
    const pretender = account({ email, email_verified: false });
    assert.equal((await sso(h, pretender)).callback.statusCode, 403, 'an unverified email links nobody');
  });

  test('a stranger with a pending invitation for their email becomes a user, and can accept it', async () => {
    const id = account();
    const invited = await h.app.inject({
      method: 'POST',
      url: `/v1/workspaces/${s.workspaceId}/invitations`,
      headers: as(s.owner.session, s.workspaceId),
      payload: { email: idp.accounts[id]!.email, role: 'member' },
    });
    const url = invited.json().url as string;
    const { callback } = await sso(h, id);
    assert.equal(callback.statusCode, 302, callback.body);
    const cookie = cookieOf(callback);
    const me = (await meWith(h, cookie)).json();
    assert.equal(me.user.email, idp.accounts[id]!.email);
    assert.equal(me.user.name, idp.accounts[id]!.name);
    const csrf = (await meWith(h, cookie)).json().csrf_token;
    const accepted = await h.app.inject({ method: 'POST', url: '/v1/invitations:accept', headers: { cookie, 'x-csrf-token': csrf }, payload: { token: url.slice(url.indexOf('#') + 1) } });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json().user_id, me.user.id);
  });

  test('with WSP_OIDC_AUTO_CREATE=true a stranger becomes a user (in no workspace yet)', async () => {
    const id = account();
    const { callback } = await sso(open, id);
    assert.equal(callback.statusCode, 302, callback.body);
    const me = (await meWith(open, cookieOf(callback))).json();
    assert.equal(me.user.email, idp.accounts[id]!.email);
    assert.deepEqual((await open.app.inject({ method: 'GET', url: '/v1/workspaces', headers: { cookie: cookieOf(callback) } })).json().data, []);
  });

  test("refused with no session: an unknown or replayed state, a code used with another login's state, an error from the provider (400 7052)", async () => {
    const id = account();
    await h.admin.createUser({ name: 'x', email: idp.accounts[id]!.email! });
    const { back, callback } = await sso(h, id);
    assert.equal(callback.statusCode, 302);
    const replay = await h.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
    assert.equal(replay.statusCode, 400);
    assert.equal(firstError(replay.json()).code, 7052);
    assert.match(firstError(replay.json()).message, /not started here, was already used/);

    // Login A's code with login B's state (in B's browser): B's PKCE verifier does not match A's challenge.
    const a = await startLogin(h);
    const aBack = await idp.signIn(String(a.start.headers.location), id);
    const b = await startLogin(h);
    const mixed = new URL(aBack);
    mixed.searchParams.set('state', b.state);
    const swapped = await h.app.inject({ method: 'GET', url: `${mixed.pathname}${mixed.search}`, headers: { cookie: b.binding } });
    assert.equal(swapped.statusCode, 400, swapped.body);
    assert.match(firstError(swapped.json()).message, /the code or the ID token was refused/);
    assert.equal(sessionSet(swapped), undefined);

    const c = await startLogin(h);
    const denied = await h.app.inject({ method: 'GET', url: `/v1/auth/oidc/callback?error=access_denied&error_description=nope&state=${c.state}`, headers: { cookie: c.binding } });
    assert.equal(denied.statusCode, 400);
    assert.match(firstError(denied.json()).message, /access_denied/);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/auth/oidc/callback?code=x&state=made-up' })).statusCode, 400);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/auth/oidc/callback?code=x' })).statusCode, 400);
  });

  test('an ID token whose signature is wrong is refused (400 7052) and no session or user is made', async () => {
    const id = account();
    await h.admin.createUser({ name: 'x', email: idp.accounts[id]!.email! });
    idp.tamperIdTokens = true;
    try {
      const { callback } = await sso(h, id);
      assert.equal(callback.statusCode, 400, callback.body);
      assert.match(firstError(callback.json()).message, /the code or the ID token was refused/);
      assert.equal(sessionSet(callback), undefined);
    } finally {
      idp.tamperIdTokens = false;
    }
    const links = await h.database.db.selectFrom('oidc_identities').select('subject').where('subject', '=', id).execute();
    assert.deepEqual(links, [], 'not linked either');
    assert.equal((await sso(h, id)).callback.statusCode, 302, 'the same account signs in once the token is sound');
  });

  test('return_to is a path of this server only', () => {
    for (const bad of [undefined, '', 'https://evil.example/', '//evil.example/x', '/\\evil.example', 'console', '/a\u0000b']) assert.equal(safeReturnTo(bad), '/console/', String(bad));
    for (const good of ['/console/', '/device?user_code=ABCD-EFGH', '/console/workspaces/ws_1']) assert.equal(safeReturnTo(good), good);
  });

  test('off without WSP_OIDC_*: the routes are 404 and the providers say so; a half configuration or an http issuer elsewhere is refused at start', async () => {
    const plain = await createTestApp();
    try {
      assert.equal((await plain.app.inject({ method: 'GET', url: '/v1/auth/oidc/start' })).statusCode, 404);
      assert.equal((await plain.app.inject({ method: 'GET', url: '/v1/auth/oidc/callback?state=x' })).statusCode, 404);
      assert.equal((await plain.app.inject({ method: 'GET', url: '/v1/auth/providers' })).json().oidc, false);
    } finally {
      await plain.close();
    }
    assert.throws(() => loadConfig({ WSP_OIDC_ISSUER: 'https://idp.example' }), /set together/);
    assert.throws(() => loadConfig({ WSP_OIDC_ISSUER: 'http://idp.example', WSP_OIDC_CLIENT_ID: 'x', WSP_OIDC_CLIENT_SECRET: 'y' }), /must be an https/);
    assert.deepEqual(loadConfig({ WSP_OIDC_ISSUER: 'https://idp.example/', WSP_OIDC_CLIENT_ID: 'x', WSP_OIDC_CLIENT_SECRET: ' y ', WSP_OIDC_AUTO_CREATE: 'true' }).oidc, {
      issuer: 'https://idp.example',
      clientId: 'x',
      clientSecret: 'y',
      autoCreate: true,
    });
  });

  test('login CSRF (RFC 9700 §4.7): a callback opened in a browser other than the one that started the login is refused, and no session is made', async () => {
    const attacker = account();
    await h.admin.createUser({ name: 'Attacker', email: idp.accounts[attacker]!.email! });
    // The attacker starts, signs in at the provider, and stops before the callback.
    const theirs = await startLogin(h);
    const back = await idp.signIn(String(theirs.start.headers.location), attacker);
    // The victim's browser opens that callback: without the attacker's binding cookie, or with its own.
    const victimOwn = await startLogin(h);
    for (const cookie of [undefined, victimOwn.binding, 'wsp_oidc=forged-binding-value']) {
      const res = await h.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, ...(cookie ? { headers: { cookie } } : {}) });
      assert.equal(res.statusCode, 400, `${cookie}: ${res.body}`);
      assert.equal(firstError(res.json()).code, 7052);
      assert.equal(sessionSet(res), undefined, `no session for ${cookie}`);
    }
    const first = await h.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
    assert.match(firstError(first.json()).message, /not started here, was already used/, 'the login was spent by the refused callback: the attacker cannot use it either');
    // The binding cookie the start sets: HttpOnly, SameSite=Lax, only for the callback's path, 10 minutes.
    assert.match(setCookies(victimOwn.start).get('wsp_oidc')!, /^wsp_oidc=[A-Za-z0-9_-]{43}; Path=\/v1\/auth\/oidc; HttpOnly; SameSite=Lax; Max-Age=600$/);
  });

  test('starts are limited per client address (429 7060 with Retry-After), return_to is bounded, and abandoned logins are purged through an index', async () => {
    const fresh = await createTestApp({ config: { publicUrl: PUBLIC_URL, oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, autoCreate: false } } });
    try {
      const from = (remoteAddress: string) => fresh.app.inject({ method: 'GET', url: '/v1/auth/oidc/start', remoteAddress });
      for (let i = 0; i < 60; i++) assert.equal((await from('198.51.100.9')).statusCode, 302, `start ${i + 1}`);
      const over = await from('198.51.100.9');
      assert.equal(over.statusCode, 429, over.body);
      assert.equal(firstError(over.json()).code, 7060);
      assert.equal(firstError(over.json()).metadata?.limit, '60');
      assert.ok(Number(over.headers['retry-after']) > 0);
      assert.equal((await from('198.51.100.10')).statusCode, 302, 'another address is not held back');
      const rows = await fresh.database.db
        .selectFrom('oidc_logins')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(rows.n), 61, 'a refused start keeps no row');

      const long = await fresh.app.inject({ method: 'GET', url: `/v1/auth/oidc/start?return_to=/console/${'x'.repeat(1100)}` });
      assert.equal(long.statusCode, 422);
      assert.deepEqual(firstError(long.json()).path, ['query', 'return_to']);

      // The hourly purge (accounts' periodic job) drops them once expired, reading the expiry index.
      fresh.clock.advanceSeconds(601);
      assert.equal(await oidcLoginStore.purgeExpired(fresh.database.db, Math.floor(fresh.clock.nowMs() / 1000)), 61);
      const db = fresh.database.db;
      if (fresh.database.engine === 'sqlite') {
        const plan = await sql<{ detail: string }>`explain query plan delete from oidc_logins where expires_at < ${1}`.execute(db);
        assert.ok(
          plan.rows.some((r) => /USING INDEX oidc_logins_expires|USING COVERING INDEX oidc_logins_expires/.test(r.detail)),
          JSON.stringify(plan.rows),
        );
      } else {
        const plan = await db.transaction().execute(async (trx) => {
          // The table is small here, so the planner would scan it anyway: ask only whether an index path exists.
          await sql`set local enable_seqscan = off`.execute(trx);
          return sql<{ 'QUERY PLAN': string }>`explain delete from oidc_logins where expires_at < ${1}`.execute(trx);
        });
        assert.ok(
          plan.rows.some((r) => /oidc_logins_expires/.test(r['QUERY PLAN'])),
          JSON.stringify(plan.rows),
        );
      }
    } finally {
      await fresh.close();
    }
  });
});

describe('whose address is it: single sign-on and accounts that never proved their email', () => {
  const PASSWORD = 'a password of the invitee';

  /** Invites `email` to the seed workspace and accepts it signed out, as anyone holding the link can. */
  async function acceptSignedOut(app: TestApp, seed: Seed, email: string) {
    const invited = await app.app.inject({
      method: 'POST',
      url: `/v1/workspaces/${seed.workspaceId}/invitations`,
      headers: as(seed.owner.session, seed.workspaceId),
      payload: { email, role: 'admin' },
    });
    assert.equal(invited.statusCode, 201, invited.body);
    const url = invited.json().url as string;
    const accepted = await app.app.inject({ method: 'POST', url: '/v1/invitations:accept', payload: { token: url.slice(url.indexOf('#') + 1), name: 'Holder', password: PASSWORD } });
    return accepted;
  }

  test("an account made by accepting an invitation signed out is unproven; an operator's or the setup's is proven (GET /v1/me)", async () => {
    const email = `invitee-${Date.now()}@corp.test`;
    const accepted = await acceptSignedOut(h, s, email);
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal((await meWith(h, cookieOf(accepted))).json().user.email_verified, false);
    const operators = await userWithPassword(h, 'an operator-made password');
    const session = (await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: operators.email, password: 'an operator-made password' } })).json().token as string;
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(session) })).json().user.email_verified, true);
  });

  test('the attack: an unproven account holding the address is never signed in to by single sign-on; the person the provider vouches for takes the address', async () => {
    const email = `newhire-${Date.now()}@corp.test`;
    // Anyone makes a workspace, invites the address and accepts the invitation themselves.
    const attacker = await h.seed('attacker');
    const made = await acceptSignedOut(h, attacker, email);
    assert.equal(made.statusCode, 200, made.body);
    const preMade = made.json().user_id as string;
    const attackerCookie = cookieOf(made);
    // The company invites the real person, who signs in with single sign-on.
    const company = await h.seed('company');
    const invited = await h.app.inject({
      method: 'POST',
      url: `/v1/workspaces/${company.workspaceId}/invitations`,
      headers: as(company.owner.session, company.workspaceId),
      payload: { email, role: 'admin' },
    });
    const realPerson = account({ email });
    const { callback } = await sso(h, realPerson);
    assert.equal(callback.statusCode, 302, callback.body);
    const me = (await meWith(h, cookieOf(callback))).json();
    assert.notEqual(me.user.id, preMade, 'single sign-on did not sign in to the pre-made account');
    assert.deepEqual([me.user.email, me.user.email_verified], [email, true]);
    // The pre-made account lost the address: its password no longer signs in with it; its session sees no email.
    const pw = await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email, password: PASSWORD } });
    assert.equal(pw.statusCode, 401);
    assert.equal((await meWith(h, attackerCookie)).json().user.email, null);
    const released = await h.database.db.selectFrom('events').select(['type', 'resource_id', 'data']).where('type', '=', 'user.email_released').where('resource_id', '=', preMade).execute();
    assert.equal(released.length, 1);
    assert.equal(JSON.parse(released[0]!.data).to_user_id, me.user.id);
    // The real person joins the company; the pre-made account is not in it.
    const url = invited.json().url as string;
    const csrf = (await meWith(h, cookieOf(callback))).json().csrf_token;
    const joined = await h.app.inject({
      method: 'POST',
      url: '/v1/invitations:accept',
      headers: { cookie: cookieOf(callback), 'x-csrf-token': csrf },
      payload: { token: url.slice(url.indexOf('#') + 1) },
    });
    assert.equal(joined.json().user_id, me.user.id);
    const seen = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: attackerCookie, 'service-context': company.workspaceId } });
    assert.equal(seen.statusCode, 403, 'the pre-made account has no way into the company');
  });

  test('without an invitation or WSP_OIDC_AUTO_CREATE, the provider-vouched stranger is refused with the way out, and the unproven account is left as it was', async () => {
    const email = `stranger-${Date.now()}@corp.test`;
    const made = await acceptSignedOut(h, s, email);
    const holder = made.json().user_id as string;
    const { callback } = await sso(h, account({ email }));
    assert.equal(callback.statusCode, 403, callback.body);
    assert.equal(firstError(callback.json()).code, 7051);
    assert.match(firstError(callback.json()).message, /never proved it controls this address/);
    const row = await h.database.db.selectFrom('users').select(['email', 'email_verified']).where('id', '=', holder).executeTakeFirstOrThrow();
    assert.deepEqual(row, { email, email_verified: 0 });
    assert.equal((await h.database.db.selectFrom('oidc_identities').select('user_id').where('user_id', '=', holder).execute()).length, 0, 'not linked');
  });

  test('the honest path: signed in to the unproven account, single sign-on in the same browser proves the address; later sign-ons find the same account', async () => {
    const email = `honest-${Date.now()}@corp.test`;
    const made = await acceptSignedOut(h, s, email);
    const own = made.json().user_id as string;
    const person = account({ email });
    const { callback } = await sso(h, person, '/console/', cookieOf(made));
    assert.equal(callback.statusCode, 302, callback.body);
    const me = (await meWith(h, cookieOf(callback))).json();
    assert.deepEqual([me.user.id, me.user.email_verified], [own, true]);
    const proved = await h.database.db.selectFrom('events').select('type').where('type', '=', 'user.email_verified').where('resource_id', '=', own).execute();
    assert.equal(proved.length, 1);
    const again = await sso(h, person);
    assert.equal((await meWith(h, cookieOf(again.callback))).json().user.id, own, 'linked: found by subject from now on');
    // Another account's browser proves nothing about this address.
    const other = await acceptSignedOut(h, s, `other-${Date.now()}@corp.test`);
    const elsewhere = `elsewhere-${Date.now()}@corp.test`;
    const third = await acceptSignedOut(h, s, elsewhere);
    const attempt = await sso(h, account({ email: elsewhere }), '/console/', cookieOf(other));
    assert.equal(attempt.callback.statusCode, 403, 'a session of another account does not link the holder');
    assert.equal((await h.database.db.selectFrom('users').select('email_verified').where('id', '=', third.json().user_id).executeTakeFirstOrThrow()).email_verified, 0);
  });

  test('accepting an invitation as a new user: a proven holder is 409 7047, an unproven one 409 7061 naming single sign-on; an operator may free or vouch for an address', async () => {
    const proven = `proven-${Date.now()}@corp.test`;
    await h.admin.createUser({ name: 'Proven', email: proven });
    const first = await acceptSignedOut(h, s, proven);
    assert.equal(first.statusCode, 409);
    assert.equal(firstError(first.json()).code, 7047);

    const unproven = `unproven-${Date.now()}@corp.test`;
    const holder = (await acceptSignedOut(h, s, unproven)).json().user_id as string;
    const second = await acceptSignedOut(h, s, unproven);
    assert.equal(second.statusCode, 409);
    assert.equal(firstError(second.json()).code, 7061);
    assert.match(firstError(second.json()).message, /sign in with single sign-on/);
    assert.equal(firstError(second.json()).metadata?.oidc, 'on');

    // The operator frees it: the next invitation makes the person's account with it.
    await assert.rejects(h.admin.releaseEmail((await h.admin.createUser({ email: `op-${Date.now()}@corp.test` })).user_id), /is proven/);
    assert.deepEqual(await h.admin.releaseEmail(holder), { user_id: holder, released: unproven });
    const third = await acceptSignedOut(h, s, unproven);
    assert.equal(third.statusCode, 200, third.body);
    // And vouches for it: single sign-on then finds that account by its address.
    const newcomer = third.json().user_id as string;
    assert.deepEqual(await h.admin.verifyEmail(newcomer), { user_id: newcomer, email: unproven, email_verified: true });
    const { callback } = await sso(h, account({ email: unproven }));
    assert.equal((await meWith(h, cookieOf(callback))).json().user.id, newcomer);
  });
});
