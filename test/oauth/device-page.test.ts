import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, userWithPassword, type TestApp } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { poll, startLogin } from './device-helpers.js';
import type { LightMyRequestResponse } from 'fastify';

const PASSWORD = 'the page password 1';

const h = useTestApp({ seed: false });

/** A user who signs in with a password. */
const person = (app: TestApp = h) => userWithPassword(app, PASSWORD);

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
const submit = (fields: Record<string, string>, opts: { cookie?: string; remoteAddress?: string; app?: TestApp } = {}) =>
  (opts.app ?? h).app.inject({
    method: 'POST',
    url: '/device',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(opts.cookie ? { cookie: opts.cookie } : {}) },
    payload: new URLSearchParams(fields).toString(),
    ...(opts.remoteAddress ? { remoteAddress: opts.remoteAddress } : {}),
  });

function assertPage(res: Res) {
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
  assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.ok(!/<script/i.test(res.body), 'no script on the page');
}

const csrfOf = (body: string) => /name="csrf_token" value="([^"]+)"/.exec(body)?.[1];

/** Signs in on the page: the cookie it sets and the approve form's CSRF token. */
async function signIn(email: string, userCode = '', app: TestApp = h): Promise<{ cookie: string; csrf: string; res: Res }> {
  const res = await submit({ action: 'sign_in', email, password: PASSWORD, user_code: userCode }, { app });
  assert.equal(res.statusCode, 200, res.body);
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  return { cookie, csrf: csrfOf(res.body)!, res };
}

test('GET /device signed out: a sign-in form (code from verification_uri_complete, email, password); nothing asks for a token', async () => {
  const started = await startLogin(h);
  const url = new URL(started.verification_uri_complete);
  const res = await h.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  assert.equal(res.statusCode, 200);
  assertPage(res);
  assert.match(res.body, new RegExp(`name="user_code" value="${started.user_code}"`));
  assert.match(res.body, /<form method="post" action="device">/);
  assert.match(res.body, /name="email" type="email"/);
  assert.match(res.body, /name="password" type="password"/);
  assert.match(res.body, /value="sign_in"/);
  assert.ok(!/session_token|value="approve"/.test(res.body));
});

test('whatever is in the query is escaped, never markup', async () => {
  const res = await h.app.inject({ method: 'GET', url: `/device?user_code=${encodeURIComponent('"><script>alert(1)</script>')}` });
  assert.equal(res.statusCode, 200);
  assertPage(res);
  assert.match(res.body, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
});

test('signing in on the page sets the session cookie and shows who is signed in, the code kept, Approve and Deny; GET then shows the same', async () => {
  const p = await person();
  const started = await startLogin(h);
  const { cookie, csrf, res } = await signIn(p.email, started.user_code);
  assertPage(res);
  assert.match(String(res.headers['set-cookie']), /^wsp_session=[A-Za-z0-9]{32}; Path=\/; HttpOnly; SameSite=Lax/);
  assert.match(res.body, new RegExp(`Signed in as <strong>${p.email}</strong>`));
  assert.match(res.body, new RegExp(`name="user_code" value="${started.user_code}"`));
  assert.match(csrf, /^[A-Za-z0-9_-]{32}$/);
  assert.ok(!res.body.includes(PASSWORD));
  const again = await h.app.inject({ method: 'GET', url: `/device?user_code=${started.user_code}`, headers: { cookie } });
  assert.match(again.body, /value="approve"/);
  assert.equal(csrfOf(again.body), csrf);
  const listed = (await h.app.inject({ method: 'GET', url: '/v1/sessions', headers: { cookie } })).json().data;
  assert.equal(listed.find((x: { current: boolean }) => x.current).issued_by, 'password');
});

test('approving with the signed-in browser: the device then gets a session of that person', async () => {
  const p = await person();
  const started = await startLogin(h);
  const { cookie, csrf } = await signIn(p.email);
  const res = await submit({ user_code: started.user_code.toLowerCase().replace('-', ''), csrf_token: csrf, action: 'approve' }, { cookie });
  assert.equal(res.statusCode, 200, res.body);
  assertPage(res);
  assert.match(res.body, /Device approved/);
  const token = await poll(h, started.device_code);
  assert.equal(token.statusCode, 200);
  const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token.json().access_token}` } });
  assert.equal(me.json().user.id, p.userId);
});

test('denying on the page: the device gets access_denied', async () => {
  const p = await person();
  const started = await startLogin(h);
  const { cookie, csrf } = await signIn(p.email);
  const res = await submit({ user_code: started.user_code, csrf_token: csrf, action: 'deny' }, { cookie });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /Device denied/);
  assert.equal((await poll(h, started.device_code)).json().error, 'access_denied');
});

test('the cookie alone decides nothing: without the CSRF token 403, signed out 401, and the login stays pending', async () => {
  const p = await person();
  const started = await startLogin(h);
  const { cookie } = await signIn(p.email);
  for (const fields of [
    { user_code: started.user_code, action: 'approve' },
    { user_code: started.user_code, csrf_token: 'A'.repeat(32), action: 'approve' },
  ] as Record<string, string>[]) {
    const res = await submit(fields, { cookie });
    assert.equal(res.statusCode, 403);
    assertPage(res);
    assert.match(res.body, /out of date/);
  }
  const signedOut = await submit({ user_code: started.user_code, csrf_token: 'x', action: 'approve' });
  assert.equal(signedOut.statusCode, 401);
  assert.match(signedOut.body, /Sign in first/);
  assert.match(signedOut.body, /value="sign_in"/);
  assert.equal((await poll(h, started.device_code)).json().error, 'authorization_pending');
});

test('page errors are pages: a wrong password 401 (the code kept), an unknown code 404, decided 409, missing fields 400', async () => {
  const p = await person();
  const started = await startLogin(h);
  const wrong = await submit({ action: 'sign_in', email: p.email, password: 'not my password', user_code: started.user_code });
  assert.equal(wrong.statusCode, 401);
  assertPage(wrong);
  assert.match(wrong.body, /The email or password is wrong/);
  assert.match(wrong.body, new RegExp(`name="user_code" value="${started.user_code}"`));
  assert.ok(!wrong.body.includes('not my password'));
  assert.equal((await submit({ action: 'sign_in', email: '', password: '' })).statusCode, 400);

  const { cookie, csrf } = await signIn(p.email);
  const cases: [Record<string, string>, number, RegExp][] = [
    [{ user_code: 'BCDF-GHJK', csrf_token: csrf, action: 'approve' }, 404, /No pending device login/],
    [{ user_code: started.user_code, csrf_token: csrf }, 400, /Choose Approve or Deny/],
    [{ user_code: started.user_code, csrf_token: csrf, action: 'delete' }, 400, /Choose Approve or Deny/],
    [{ user_code: ' ', csrf_token: csrf, action: 'approve' }, 400, /Enter the code/],
  ];
  for (const [fields, status, text] of cases) {
    const res = await submit(fields, { cookie, remoteAddress: '10.7.0.1' });
    assert.equal(res.statusCode, status, `${JSON.stringify(fields)}: ${res.body}`);
    assertPage(res);
    assert.match(res.body, text);
  }
  assert.equal((await submit({ user_code: started.user_code, csrf_token: csrf, action: 'approve' }, { cookie })).statusCode, 200);
  const again = await submit({ user_code: started.user_code, csrf_token: csrf, action: 'deny' }, { cookie });
  assert.equal(again.statusCode, 409);
  assert.match(again.body, /already approved or denied/);
});

test('the page counts wrong codes like the API: 429 with Retry-After', async () => {
  const p = await person();
  const { cookie, csrf } = await signIn(p.email);
  let last: LightMyRequestResponse | undefined;
  for (let i = 0; i < 11; i++) last = await submit({ user_code: 'AAAA-AAAA', csrf_token: csrf, action: 'approve' }, { cookie, remoteAddress: '10.8.0.1' });
  assert.equal(last!.statusCode, 429);
  assert.ok(Number(last!.headers['retry-after']) > 0);
  assert.match(last!.body, /Too many wrong codes/);
});

test('failed sign-ins on the page are limited as on the API (per account), and dead cookies per address', async () => {
  const limited = await createTestApp({ config: { authFailuresPerMinute: 3 } });
  try {
    const p = await person(limited);
    let last: LightMyRequestResponse | undefined;
    for (let i = 0; i < 11; i++) last = await submit({ action: 'sign_in', email: p.email, password: 'wrong password!!' }, { app: limited });
    assert.equal(last!.statusCode, 429);
    assert.ok(Number(last!.headers['retry-after']) > 0);
    assert.match(last!.body, /Too many failed sign-ins/);

    const started = await startLogin(limited);
    const send = (ip: string) => submit({ user_code: started.user_code, csrf_token: 'x', action: 'approve' }, { app: limited, cookie: `wsp_session=${'y'.repeat(32)}`, remoteAddress: ip });
    for (let i = 0; i < 3; i++) assert.equal((await send('10.9.0.1')).statusCode, 401);
    const res = await send('10.9.0.1');
    assert.equal(res.statusCode, 429);
    assertPage(res);
    assert.equal((await send('10.9.0.2')).statusCode, 401, 'another address is not limited');
  } finally {
    await limited.close();
  }
});

test('a body the page cannot read is a 400 page, not JSON', async () => {
  const res = await h.app.inject({ method: 'POST', url: '/device', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
  assert.equal(res.statusCode, 400);
  assertPage(res);
});

test("login CSRF: a sign-in or a decision posted by a page of another site changes nothing (403 page, no cookie); this site's own form works", async () => {
  const attacker = await person();
  const victim = await person();
  const sent = (fields: Record<string, string>, headers: Record<string, string>, cookie?: string) =>
    h.app.inject({
      method: 'POST',
      url: '/device',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers, ...(cookie ? { cookie } : {}) },
      payload: new URLSearchParams(fields).toString(),
    });
  const signInAs = { action: 'sign_in', email: attacker.email, password: PASSWORD };
  // What browsers send with a form posted from another site, and from this one (http://localhost:8080, the app's WSP_PUBLIC_URL).
  const crossSite: Record<string, string>[] = [
    { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' },
    { origin: 'https://attacker.example' },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site', origin: 'http://sub.localhost:8080' },
    { origin: 'null' },
  ];
  for (const headers of crossSite) {
    const res = await sent(signInAs, headers);
    assert.equal(res.statusCode, 403, JSON.stringify(headers));
    assertPage(res);
    assert.match(res.body, /This form was sent from another site/);
    assert.equal(res.headers['set-cookie'], undefined, `no session for ${JSON.stringify(headers)}`);
  }
  // The victim's own browser, signed in: a decision posted from elsewhere is refused too, even with a stolen form token.
  const mine = await signIn(victim.email);
  const started = await startLogin(h);
  const decided = await sent({ action: 'approve', user_code: started.user_code, csrf_token: mine.csrf }, { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' }, mine.cookie);
  assert.equal(decided.statusCode, 403);
  assert.equal((await poll(h, started.device_code)).json().error, 'authorization_pending', 'nothing was decided');
  // The same forms from this site: signed in, and decided.
  const own = await sent(signInAs, { origin: 'http://localhost:8080', 'sec-fetch-site': 'same-origin' });
  assert.equal(own.statusCode, 200, own.body);
  assert.match(String(own.headers['set-cookie']), /^wsp_session=/);
  const typed = await sent({ action: 'sign_in', email: victim.email, password: PASSWORD }, { 'sec-fetch-site': 'none' });
  assert.equal(typed.statusCode, 200, 'a form the person opened themselves (Sec-Fetch-Site: none)');
  // The page asks for no referrer, so Chromium sends `Origin: null` with its own form: the fetch metadata decides.
  const ownNoReferrer = await sent({ action: 'sign_in', email: victim.email, password: PASSWORD }, { origin: 'null', 'sec-fetch-site': 'same-origin' });
  assert.equal(ownNoReferrer.statusCode, 200, ownNoReferrer.body);
});

test("an approval and a denial on the page record the request id, address and user agent, as the API's do", async () => {
  const p = await person();
  const { cookie, csrf } = await signIn(p.email);
  const viaPage = await startLogin(h);
  const res = await h.app.inject({
    method: 'POST',
    url: '/device',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, 'user-agent': 'the page test browser', 'x-request-id': 'req-page-approve' },
    payload: new URLSearchParams({ action: 'approve', user_code: viaPage.user_code, csrf_token: csrf }).toString(),
    remoteAddress: '203.0.113.7',
  });
  assert.equal(res.statusCode, 200, res.body);
  const viaApi = await startLogin(h);
  const session = (await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: p.email, password: PASSWORD } })).json().token as string;
  const api = await h.app.inject({
    method: 'POST',
    url: '/v1/oauth/device/deny',
    headers: { authorization: `Bearer ${session}`, 'user-agent': 'the api test client' },
    payload: { user_code: viaApi.user_code },
    remoteAddress: '203.0.113.8',
  });
  assert.equal(api.statusCode, 200, api.body);
  const rows = await h.database.db
    .selectFrom('events')
    .select(['type', 'ip', 'user_agent', 'request_id', 'actor_id'])
    .where('type', 'in', ['device_authorization.approved', 'device_authorization.denied'])
    .where('actor_id', '=', p.userId)
    .orderBy('id')
    .execute();
  assert.equal(rows.length, 2);
  const [page, viaApiRow] = rows;
  assert.deepEqual({ type: page!.type, ip: page!.ip, user_agent: page!.user_agent }, { type: 'device_authorization.approved', ip: '203.0.113.7', user_agent: 'the page test browser' });
  assert.ok(page!.request_id, "the page's approval names its request");
  assert.deepEqual({ type: viaApiRow!.type, ip: viaApiRow!.ip, user_agent: viaApiRow!.user_agent }, { type: 'device_authorization.denied', ip: '203.0.113.8', user_agent: 'the api test client' });
  assert.ok(viaApiRow!.request_id);
});
