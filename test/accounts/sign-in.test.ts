import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, as, firstError, userWithPassword } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import type { LightMyRequestResponse } from 'fastify';

const PASSWORD = 'correct horse battery staple';

const h = useTestApp();
const s = h.seeded;

/** A user with an email and a password, member of the seed's workspace. */
const person = (role: 'owner' | 'admin' | 'member' = 'member') => userWithPassword(h, PASSWORD, { workspaceId: s.workspaceId, role });

const signIn = (payload: Record<string, unknown>, headers: Record<string, string> = {}, remoteAddress?: string) =>
  h.app.inject({ method: 'POST', url: '/v1/sessions', payload, headers: { 'user-agent': 'test-browser/1.0', ...headers }, ...(remoteAddress ? { remoteAddress } : {}) });

/** The wsp_session cookie's value and attributes from a response. */
function cookieOf(res: { headers: Record<string, unknown> }): { value: string; attributes: string[] } {
  const header = res.headers['set-cookie'];
  const line = Array.isArray(header) ? header[0] : String(header);
  const [pair, ...attributes] = line.split('; ');
  assert.match(pair, /^wsp_session=/);
  return { value: pair!.slice('wsp_session='.length), attributes };
}

describe('POST /v1/sessions: signing in with a password', () => {
  test('201 with a session token shown once, its user and end; the email is matched in any case; the session is listed as issued by password', async () => {
    const p = await person();
    const res = await signIn({ email: p.email.toUpperCase(), password: PASSWORD });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['expires_at', 'id', 'token', 'user_id']);
    assert.equal(body.user_id, p.userId);
    assert.match(body.token, /^[A-Za-z0-9]{32}$/);
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(body.token) });
    assert.equal(me.json().user.id, p.userId);
    assert.equal(me.json().csrf_token, undefined, 'a bearer session needs no CSRF token');
    const listed = (await h.app.inject({ method: 'GET', url: '/v1/sessions', headers: as(body.token) })).json().data;
    const mine = listed.find((x: { id: string }) => x.id === body.id);
    assert.equal(mine.issued_by, 'password');
    assert.equal(mine.user_agent, 'test-browser/1.0');
  });

  test('a wrong password and an unknown email are the same 401 (7044), in about the same time', async () => {
    const p = await person();
    const wrong = await signIn({ email: p.email, password: 'not the password at all' });
    const unknown = await signIn({ email: `nobody-${Date.now()}@example.com`, password: 'not the password at all' });
    assert.equal(wrong.statusCode, 401);
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(firstError(wrong.json()), firstError(unknown.json()));
    assert.equal(firstError(wrong.json()).code, 7044);
    // Both verify an argon2id hash: an unknown email is not answered faster. Measured in this
    // process's CPU time (the hash runs on its thread pool), which other test processes on the
    // machine do not inflate as they do wall time; the two kinds alternate.
    const other = await person();
    const cpu = async (email: string) => {
      const before = process.cpuUsage();
      await signIn({ email, password: 'not the password at all' });
      const used = process.cpuUsage(before);
      return used.user + used.system;
    };
    const known: number[] = [];
    const stranger: number[] = [];
    for (let i = 0; i < 7; i++) {
      known.push(await cpu(other.email));
      stranger.push(await cpu(`stranger-${i}-${Date.now()}@example.com`));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[3]!;
    const ratio = median(stranger) / median(known);
    assert.ok(ratio > 0.5 && ratio < 2, `median CPU ${median(known)} µs for a known email, ${median(stranger)} µs for an unknown one`);
  });

  test('bad bodies are 422 at their field; an over-long password is refused before any hashing', async () => {
    for (const [payload, path] of [
      [{ password: PASSWORD }, 'email'],
      [{ email: 'not-an-email', password: PASSWORD }, 'email'],
      [{ email: 'a@b.c' }, 'password'],
      [{ email: 'a@b.c', password: 'x'.repeat(257) }, 'password'],
      [{ email: 'a@b.c', password: PASSWORD, cookie: 'yes' }, 'cookie'],
      [{ email: 'a@b.c', password: PASSWORD, extra: 1 }, 'extra'],
    ] as const) {
      const res = await signIn(payload);
      assert.equal(res.statusCode, 422, JSON.stringify(payload));
      assert.deepEqual(firstError(res.json()).path, ['body', path]);
    }
  });

  test('failed sign-ins are limited per address and account: the eleventh from that address in 15 minutes is 429 with Retry-After, even with the right password; then it works again', async () => {
    const p = await person();
    for (let i = 0; i < 10; i++) assert.equal((await signIn({ email: p.email, password: 'wrong password here' })).statusCode, 401);
    const limited = await signIn({ email: p.email, password: PASSWORD });
    assert.equal(limited.statusCode, 429);
    assert.equal(firstError(limited.json()).code, 7045);
    const wait = Number(limited.headers['retry-after']);
    assert.ok(wait > 0 && wait <= 900, String(wait));
    h.clock.advanceSeconds(wait);
    assert.equal((await signIn({ email: p.email, password: PASSWORD })).statusCode, 201);
  });

  test("an attacker's wrong passwords from one address lock nobody out: the owner's right password from another address signs in, and the attacker stays limited (issue 48.10)", async () => {
    const p = await person();
    const attacker = '10.48.10.1';
    const owner = '10.48.10.2';
    for (let i = 0; i < 10; i++) assert.equal((await signIn({ email: p.email, password: `guess number ${i}` }, {}, attacker)).statusCode, 401);
    for (const password of ['guess number 10', PASSWORD]) {
      const limited = await signIn({ email: p.email, password }, {}, attacker);
      assert.equal(limited.statusCode, 429, 'from the address that guessed, even the right password waits');
      assert.equal(firstError(limited.json()).code, 7045);
      const wait = Number(limited.headers['retry-after']);
      assert.ok(wait > 0 && wait <= 900, String(wait));
    }
    const theOwner = await signIn({ email: p.email, password: PASSWORD }, {}, owner);
    assert.equal(theOwner.statusCode, 201, theOwner.body);
    assert.equal(theOwner.json().user_id, p.userId);
    const still = await signIn({ email: p.email, password: 'guess number 11' }, {}, attacker);
    assert.equal(still.statusCode, 429, 'the guesser is still limited');
    assert.ok(Number(still.headers['retry-after']) > 0);
  });

  test('an account guessed at from many addresses: past 30 failures each further address gets 3 on it, and the owner still signs in from a new one (issue 48.10)', async () => {
    const p = await person();
    for (let a = 1; a <= 3; a++) {
      for (let i = 0; i < 10; i++) assert.equal((await signIn({ email: p.email, password: `spread guess ${a}.${i}` }, {}, `10.48.11.${a}`)).statusCode, 401, `address ${a}, guess ${i}`);
    }
    for (let i = 0; i < 3; i++) assert.equal((await signIn({ email: p.email, password: `late guess ${i}` }, {}, '10.48.11.4')).statusCode, 401);
    const limited = await signIn({ email: p.email, password: 'late guess 3' }, {}, '10.48.11.4');
    assert.equal(limited.statusCode, 429, 'a fourth failure from a fourth address is refused while the account is under attack');
    assert.equal(firstError(limited.json()).code, 7045);
    assert.equal((await signIn({ email: p.email, password: PASSWORD }, {}, '10.48.11.5')).statusCode, 201, "the owner's right password from a new address");
  });

  test('40 right passwords at once from one address all sign in: checks under way are not failures (issue 48.10)', async () => {
    const p = await person();
    const answers = await Promise.all(Array.from({ length: 40 }, () => signIn({ email: p.email, password: PASSWORD }, {}, '10.48.12.1')));
    const refused = answers.filter((r) => r.statusCode !== 201);
    assert.equal(refused.length, 0, refused.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
    assert.equal(new Set(answers.map((r) => r.json().id)).size, 40, 'forty sessions');
  });

  test('40 wrong passwords at once from one address: no more than the limit are checked, on one account (10) and over many (30); the rest are 429 (7045)', async () => {
    const p = await person();
    const failures = async (userIds: string[]) =>
      Number(
        (
          await h.database.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('type', '=', 'session.failed')
            .where('resource_id', 'in', userIds)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const one = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn({ email: p.email, password: `parallel guess ${i}` }, {}, '10.48.13.1')));
    assert.deepEqual(one.map((r) => r.statusCode).sort(), [...Array(10).fill(401), ...Array(30).fill(429)], one.map((r) => r.body).join('\n'));
    assert.ok(one.filter((r) => r.statusCode === 429).every((r) => firstError(r.json()).code === 7045 && Number(r.headers['retry-after']) > 0));
    assert.equal(await failures([p.userId]), 10, 'ten password checks, each recorded');

    const people = await Promise.all(Array.from({ length: 40 }, () => person()));
    const many = await Promise.all(people.map((q, i) => signIn({ email: q.email, password: `wide guess ${i}` }, {}, '10.48.13.2')));
    assert.deepEqual(many.map((r) => r.statusCode).sort(), [...Array(30).fill(401), ...Array(10).fill(429)], many.map((r) => r.body).join('\n'));
    assert.equal(await failures(people.map((q) => q.userId)), 30);
  });

  test('behind a trusted proxy, the address the limits count is the one X-Forwarded-For names (issue 48.10)', async () => {
    const h2 = await createTestApp({ config: { trustProxy: ['127.0.0.1'] } });
    try {
      const p = await userWithPassword(h2, PASSWORD);
      const via = (password: string, client: string) => h2.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: p.email, password }, headers: { 'x-forwarded-for': client } });
      for (let i = 0; i < 10; i++) assert.equal((await via(`proxied guess ${i}`, '10.48.14.1')).statusCode, 401);
      assert.equal((await via('proxied guess 10', '10.48.14.1')).statusCode, 429);
      assert.equal((await via(PASSWORD, '10.48.14.2')).statusCode, 201, 'another client behind the same proxy');
    } finally {
      await h2.close();
    }
  });

  test('and per client address, over every account', async () => {
    const h2 = await createTestApp();
    try {
      let last: LightMyRequestResponse | undefined;
      for (let i = 0; i < 31; i++) last = await h2.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: `user${i}@example.com`, password: 'wrong password here' } });
      assert.equal(last!.statusCode, 429);
      const other = await h2.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: 'x@example.com', password: 'wrong password here' }, remoteAddress: '10.1.2.3' });
      assert.equal(other.statusCode, 401, 'another address is not limited');
    } finally {
      await h2.close();
    }
  });
});

describe('the wsp_session cookie', () => {
  test('"cookie": true sets it HttpOnly, SameSite=Lax, Path=/ (no Secure over http) and answers no token', async () => {
    const p = await person();
    const res = await signIn({ email: p.email, password: PASSWORD, cookie: true });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().token, undefined);
    const { value, attributes } = cookieOf(res);
    assert.match(value, /^[A-Za-z0-9]{32}$/);
    assert.ok(attributes.includes('HttpOnly') && attributes.includes('SameSite=Lax') && attributes.includes('Path=/'), attributes.join('; '));
    assert.ok(!attributes.includes('Secure'));
    const maxAge = Number(attributes.find((a) => a.startsWith('Max-Age='))!.slice(8));
    assert.equal(maxAge, res.json().expires_at - Math.floor(h.clock.nowMs() / 1000));
  });

  test('under an https public URL the cookie is Secure', async () => {
    const h2 = await createTestApp({ config: { publicUrl: 'https://wsp.example.com' } });
    try {
      const { user_id } = await h2.admin.createUser({ name: 'x', email: 'secure@example.com' });
      await h2.admin.setPassword(user_id, PASSWORD);
      const res = await h2.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: 'secure@example.com', password: PASSWORD, cookie: true } });
      assert.ok(cookieOf(res).attributes.includes('Secure'));
    } finally {
      await h2.close();
    }
  });

  test('reads with the cookie work; a write needs X-CSRF-Token from GET /v1/me and, when sent, this server as Origin: else 403 (7042) and nothing changes', async () => {
    const p = await person('admin');
    const { value } = cookieOf(await signIn({ email: p.email, password: PASSWORD, cookie: true }));
    const cookie = { cookie: `theme=dark; wsp_session=${value}` };
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie });
    assert.equal(me.statusCode, 200);
    const csrf = me.json().csrf_token;
    assert.match(csrf, /^[A-Za-z0-9_-]{32}$/);

    const rename = (headers: Record<string, string>, name: string) =>
      h.app.inject({ method: 'PATCH', url: `/v1/workspaces/${s.workspaceId}`, payload: { name }, headers: { ...cookie, 'service-context': s.workspaceId, 'if-match': '*', ...headers } });
    const before = (await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}`, headers: as(s.apiToken) })).json().name;
    for (const [headers, path] of [
      [{}, 'x-csrf-token'],
      [{ 'x-csrf-token': 'A'.repeat(32) }, 'x-csrf-token'],
      [{ 'x-csrf-token': csrf, origin: 'https://evil.example' }, 'origin'],
    ] as const) {
      const res = await rename(headers, 'Taken over');
      assert.equal(res.statusCode, 403, JSON.stringify(headers));
      assert.equal(firstError(res.json()).code, 7042);
      assert.deepEqual(firstError(res.json()).path, ['headers', path]);
    }
    assert.equal((await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}`, headers: as(s.apiToken) })).json().name, before, 'nothing changed');
    assert.equal((await rename({ 'x-csrf-token': csrf }, 'Renamed by cookie')).statusCode, 200);
    assert.equal((await rename({ 'x-csrf-token': csrf, origin: 'http://localhost:8080' }, 'Renamed again')).statusCode, 200);
    await rename({ 'x-csrf-token': csrf }, before);
  });

  test('the cookie is a session like any other: Service-Context rules hold, a bearer header wins over it, a malformed one is 401', async () => {
    const p = await person();
    const other = await h.admin.createWorkspace('Second');
    await h.admin.addMember(other.workspace_id, p.userId, 'member');
    const { value } = cookieOf(await signIn({ email: p.email, password: PASSWORD, cookie: true }));
    const noContext = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: { cookie: `wsp_session=${value}` } });
    assert.equal(noContext.statusCode, 403);
    assert.equal(firstError(noContext.json()).code, 7021);
    const bearer = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { ...as(s.apiToken), cookie: `wsp_session=${value}` } });
    assert.equal(bearer.json().credential.kind, 'api_token');
    for (const bad of ['garbage', 'sk_sess_' + 'A'.repeat(43), '']) {
      const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: `wsp_session=${bad}` } });
      assert.equal(res.statusCode, 401, bad);
    }
  });

  test('DELETE /v1/sessions/current with the cookie ends the session and clears the cookie', async () => {
    const p = await person();
    const { value } = cookieOf(await signIn({ email: p.email, password: PASSWORD, cookie: true }));
    const cookie = { cookie: `wsp_session=${value}` };
    const csrf = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie })).json().csrf_token;
    const out = await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: { ...cookie, 'x-csrf-token': csrf } });
    assert.equal(out.statusCode, 204);
    const cleared = cookieOf(out);
    assert.equal(cleared.value, '');
    assert.ok(cleared.attributes.includes('Max-Age=0'));
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie })).statusCode, 401);
  });
});

describe('GET /v1/auth/providers', () => {
  test('says which sign-in methods are on, without a credential', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/auth/providers' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { password: true, oidc: false, oidc_start_url: null });
  });
});
