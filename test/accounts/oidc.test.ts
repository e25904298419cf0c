import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, as, firstError, type TestApp, type Seed } from '../helpers/harness.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { loadConfig } from '../../src/config.js';
import { safeReturnTo } from '../../src/accounts/oidc.js';

/**
 * Single sign-on end to end against a real OpenID provider on loopback (`oidc-provider`): the
 * platform's start redirect, the provider's login and consent, the callback, the cookie session.
 */
const PUBLIC_URL = 'http://localhost:8080';

let idp: TestProvider;
let h: TestApp;
let open: TestApp;
let s: Seed;

before(async () => {
  idp = await startProvider(`${PUBLIC_URL}/v1/auth/oidc/callback`);
  const oidc = { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, autoCreate: false };
  h = await createTestApp({ config: { publicUrl: PUBLIC_URL, oidc } });
  open = await createTestApp({ config: { publicUrl: PUBLIC_URL, oidc: { ...oidc, autoCreate: true } } });
  s = await h.seed();
});
after(async () => {
  await h.close();
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

/** The whole sign-in: start on the platform, the provider's pages, then the platform's callback. */
async function sso(app: TestApp, accountId: string, returnTo?: string) {
  const start = await app.app.inject({ method: 'GET', url: `/v1/auth/oidc/start${returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`}` });
  assert.equal(start.statusCode, 302, start.body);
  const back = await idp.signIn(String(start.headers.location), accountId);
  assert.equal(back.origin + back.pathname, `${PUBLIC_URL}/v1/auth/oidc/callback`);
  const callback = await app.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
  return { start, back, callback };
}

const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0]!;
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
    assert.match(String(callback.headers['set-cookie']), /^wsp_session=[A-Za-z0-9]{32}; Path=\/; HttpOnly; SameSite=Lax/);
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
    assert.equal(callback.headers['set-cookie'], undefined);
    const users = await h.database.db.selectFrom('users').select('id').where('email_key', '=', idp.accounts[stranger]!.email!.toLowerCase()).execute();
    assert.equal(users.length, 0);

    const email = `unverified-${Date.now()}@idp.example`;
    await h.admin.createUser({ name: 'Owner of the address', email });
    const pretender = account({ email, email_verified: false });
    assert.equal((await sso(h, pretender)).callback.statusCode, 403, 'an unverified email links nobody');
  });

  test('a stranger with a pending invitation for their email becomes a user, and can accept it', async () => {
    const id = account();
    const invited = await h.app.inject({ method: 'POST', url: `/v1/workspaces/${s.workspaceId}/invitations`, headers: as(s.owner.session, s.workspaceId), payload: { email: idp.accounts[id]!.email, role: 'member' } });
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

  test('refused with no session: an unknown or replayed state, a code used with another login\'s state, an error from the provider (400 7052)', async () => {
    const id = account();
    await h.admin.createUser({ name: 'x', email: idp.accounts[id]!.email! });
    const { back, callback } = await sso(h, id);
    assert.equal(callback.statusCode, 302);
    const replay = await h.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
    assert.equal(replay.statusCode, 400);
    assert.equal(firstError(replay.json()).code, 7052);
    assert.match(firstError(replay.json()).message, /not started here, was already used/);

    // Login A's code with login B's state: B's PKCE verifier does not match A's challenge.
    const a = await h.app.inject({ method: 'GET', url: '/v1/auth/oidc/start' });
    const aBack = await idp.signIn(String(a.headers.location), id);
    const b = await h.app.inject({ method: 'GET', url: '/v1/auth/oidc/start' });
    const bState = new URL(String(b.headers.location)).searchParams.get('state')!;
    const mixed = new URL(aBack);
    mixed.searchParams.set('state', bState);
    const swapped = await h.app.inject({ method: 'GET', url: `${mixed.pathname}${mixed.search}` });
    assert.equal(swapped.statusCode, 400, swapped.body);
    assert.match(firstError(swapped.json()).message, /the code or the ID token was refused/);
    assert.equal(swapped.headers['set-cookie'], undefined);

    const c = await h.app.inject({ method: 'GET', url: '/v1/auth/oidc/start' });
    const cState = new URL(String(c.headers.location)).searchParams.get('state')!;
    const denied = await h.app.inject({ method: 'GET', url: `/v1/auth/oidc/callback?error=access_denied&error_description=nope&state=${cState}` });
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
      assert.equal(callback.headers['set-cookie'], undefined);
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
    assert.deepEqual(loadConfig({ WSP_OIDC_ISSUER: 'https://idp.example/', WSP_OIDC_CLIENT_ID: 'x', WSP_OIDC_CLIENT_SECRET: ' y ', WSP_OIDC_AUTO_CREATE: 'true' }).oidc, { issuer: 'https://idp.example', clientId: 'x', clientSecret: 'y', autoCreate: true });
  });
});
