import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp, type Seed } from '../helpers/harness.js';
import { poll, postForm, startLogin } from './device-helpers.js';

let h: TestApp;
let s: Seed;
before(async () => {
  h = await createTestApp();
  s = await h.seed();
});
after(() => h.close());

const submit = (fields: Record<string, string>, remoteAddress?: string) => postForm(h, '/device', fields, remoteAddress ? { remoteAddress } : {});

function assertPage(res: { headers: Record<string, unknown>; body: string }) {
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
  assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.ok(!/<script/i.test(res.body), 'no script on the page');
}

test('GET /device shows the form, filled in from verification_uri_complete', async () => {
  const started = await startLogin(h);
  const url = new URL(started.verification_uri_complete);
  const res = await h.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  assert.equal(res.statusCode, 200);
  assertPage(res);
  assert.match(res.body, new RegExp(`name="user_code" value="${started.user_code}"`));
  assert.match(res.body, /<form method="post" action="device">/);
  assert.match(res.body, /name="session_token" type="password"/);
  assert.match(res.body, /value="approve"/);
  assert.match(res.body, /value="deny"/);
});

test('whatever is in the query is escaped, never markup', async () => {
  const res = await h.app.inject({ method: 'GET', url: `/device?user_code=${encodeURIComponent('"><script>alert(1)</script>')}` });
  assert.equal(res.statusCode, 200);
  assertPage(res);
  assert.match(res.body, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
});

test('approving on the page: the device then gets a session of the person who approved', async () => {
  const started = await startLogin(h);
  const res = await submit({ user_code: started.user_code.toLowerCase().replace('-', ''), session_token: s.member.session, action: 'approve' });
  assert.equal(res.statusCode, 200, res.body);
  assertPage(res);
  assert.match(res.body, /Device approved/);
  assert.match(res.body, new RegExp(started.user_code));
  const token = await poll(h, started.device_code);
  assert.equal(token.statusCode, 200);
  const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token.json().access_token}` } });
  assert.equal(me.json().user.id, s.member.userId);
});

test('denying on the page: the device gets access_denied', async () => {
  const started = await startLogin(h);
  const res = await submit({ user_code: started.user_code, session_token: s.owner.session, action: 'deny' });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /Device denied/);
  assert.equal((await poll(h, started.device_code)).json().error, 'access_denied');
});

test('page errors are pages: bad token 401, API token 403, unknown code 404, decided 409, missing fields 400', async () => {
  const started = await startLogin(h);
  const cases: [Record<string, string>, number, RegExp][] = [
    [{ user_code: started.user_code, session_token: 'x'.repeat(32), action: 'approve' }, 401, /session token is not valid/],
    [{ user_code: started.user_code, session_token: '', action: 'approve' }, 401, /session token is not valid/],
    [{ user_code: started.user_code, session_token: s.apiToken, action: 'approve' }, 403, /session token/],
    [{ user_code: 'BCDF-GHJK', session_token: s.admin.session, action: 'approve' }, 404, /No pending device login/],
    [{ user_code: started.user_code, session_token: s.admin.session }, 400, /Choose Approve or Deny/],
    [{ user_code: started.user_code, session_token: s.admin.session, action: 'delete' }, 400, /Choose Approve or Deny/],
    [{ user_code: ' ', session_token: s.admin.session, action: 'approve' }, 400, /Enter the code/],
  ];
  for (const [fields, status, text] of cases) {
    const res = await submit(fields, '10.7.0.1');
    assert.equal(res.statusCode, status, `${JSON.stringify(fields)}: ${res.body}`);
    assertPage(res);
    assert.match(res.body, text);
    if (fields.session_token) assert.ok(!res.body.includes(fields.session_token), 'the token is never echoed');
  }
  assert.equal((await submit({ user_code: started.user_code, session_token: s.admin.session, action: 'approve' })).statusCode, 200);
  const again = await submit({ user_code: started.user_code, session_token: s.admin.session, action: 'deny' });
  assert.equal(again.statusCode, 409);
  assert.match(again.body, /already approved or denied/);
});

test('the page counts wrong codes like the API: 429 with Retry-After', async () => {
  const { user_id } = await h.admin.createUser({ name: 'page guesser' });
  const { session_token } = await h.admin.createSession(user_id);
  let last;
  for (let i = 0; i < 11; i++) last = await submit({ user_code: 'AAAA-AAAA', session_token, action: 'approve' }, '10.8.0.1');
  assert.equal(last!.statusCode, 429);
  assert.ok(Number(last!.headers['retry-after']) > 0);
  assert.match(last!.body, /Too many wrong codes/);
});

test('failed sign-ins on the page are limited per address like any failed authentication', async () => {
  const limited = await createTestApp({ config: { authFailuresPerMinute: 3 } });
  try {
    const started = await startLogin(limited);
    const send = (ip: string) => postForm(limited, '/device', { user_code: started.user_code, session_token: 'y'.repeat(32), action: 'approve' }, { remoteAddress: ip });
    for (let i = 0; i < 3; i++) assert.equal((await send('10.9.0.1')).statusCode, 401);
    const res = await send('10.9.0.1');
    assert.equal(res.statusCode, 429);
    assert.ok(Number(res.headers['retry-after']) > 0);
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
