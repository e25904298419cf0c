import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { postForm, startLogin } from './device-helpers.js';
import { GUESS_WINDOW_SECONDS, MAX_LOGINS_STARTED_PER_IP } from '../../src/oauth/guess-limiter.js';

const h = useTestApp({ config: { publicUrl: 'https://wsp.example.test', oauthClientIds: ['wsp-cli', 'ci-robot'] }, seed: false });

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

describe('POST /v1/oauth/device_authorization', () => {
  test(`at most ${MAX_LOGINS_STARTED_PER_IP} logins started per client address in ${GUESS_WINDOW_SECONDS / 60} minutes: then 429 slow_down with Retry-After, and no row is kept`, async () => {
    const rows = async () =>
      Number(
        (
          await h.database.db
            .selectFrom('device_authorizations')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await rows();
    const start = (ip: string) => postForm(h, '/v1/oauth/device_authorization', { client_id: 'wsp-cli' }, { remoteAddress: ip });
    for (let i = 0; i < MAX_LOGINS_STARTED_PER_IP; i++) assert.equal((await start('192.0.2.7')).statusCode, 200, `login ${i + 1}`);
    for (let i = 0; i < 20; i++) {
      const res = await start('192.0.2.7');
      assert.equal(res.statusCode, 429);
      assert.equal(res.headers['cache-control'], 'no-store');
      const wait = Number(res.headers['retry-after']);
      assert.ok(wait > 0 && wait <= GUESS_WINDOW_SECONDS, `Retry-After ${wait}`);
      assert.equal(res.json().error, 'slow_down');
      assert.match(res.json().error_description, /device logins were started from this address/);
    }
    assert.equal(await rows(), before + MAX_LOGINS_STARTED_PER_IP, 'refused starts make no rows');
    assert.equal((await start('192.0.2.8')).statusCode, 200, 'another address is not limited');
    // A new window, a new allowance.
    h.clock.advanceSeconds(GUESS_WINDOW_SECONDS);
    assert.equal((await start('192.0.2.7')).statusCode, 200);
  });

  test('a form request answers RFC 8628 §3.2 fields, never cached', async () => {
    const res = await postForm(h, '/v1/oauth/device_authorization', { client_id: 'wsp-cli' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['device_code', 'expires_in', 'interval', 'user_code', 'verification_uri', 'verification_uri_complete']);
    assert.match(body.user_code, USER_CODE);
    assert.ok(body.device_code.length >= 43, 'a device code carries 256 bits');
    assert.equal(body.verification_uri, 'https://wsp.example.test/device');
    assert.equal(body.verification_uri_complete, `https://wsp.example.test/device?user_code=${body.user_code}`);
    assert.equal(body.expires_in, 900);
    assert.equal(body.interval, 5);
  });

  test('JSON is accepted too; unknown parameters are ignored (RFC 6749 §3.1)', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/oauth/device_authorization', payload: { client_id: 'wsp-cli', audience: 'x' } });
    assert.equal(res.statusCode, 200);
    assert.match(res.json().user_code, USER_CODE);
  });

  test('a client id from WSP_OAUTH_CLIENT_IDS is accepted; an unknown one is invalid_client', async () => {
    assert.equal((await postForm(h, '/v1/oauth/device_authorization', { client_id: 'ci-robot' })).statusCode, 200);
    const res = await postForm(h, '/v1/oauth/device_authorization', { client_id: 'someone-else' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_client');
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('bad requests are 400 invalid_request in OAuth form, not the envelope', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['missing client_id', { 'content-type': 'application/x-www-form-urlencoded' }, ''],
      ['empty client_id', { 'content-type': 'application/x-www-form-urlencoded' }, 'client_id='],
      ['repeated client_id', { 'content-type': 'application/x-www-form-urlencoded' }, 'client_id=wsp-cli&client_id=wsp-cli'],
      ['bad JSON', { 'content-type': 'application/json' }, '{"client_id":'],
      ['JSON array', { 'content-type': 'application/json' }, '[]'],
      ['client_id not a string', { 'content-type': 'application/json' }, '{"client_id":5}'],
      ['text body', { 'content-type': 'text/plain' }, 'client_id=wsp-cli'],
    ];
    for (const [name, headers, payload] of cases) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/oauth/device_authorization', headers, payload });
      assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
      const body = res.json();
      assert.equal(body.error, 'invalid_request', name);
      assert.equal(typeof body.error_description, 'string');
      assert.equal(body.success, undefined, 'not the envelope');
      assert.equal(res.headers['cache-control'], 'no-store');
    }
  });

  test('a grant_type sent here changes nothing: a missing client_id is still invalid_request', async () => {
    const res = await postForm(h, '/v1/oauth/device_authorization', { grant_type: 'password' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
  });

  test('a scope is invalid_scope: none are defined', async () => {
    const res = await postForm(h, '/v1/oauth/device_authorization', { client_id: 'wsp-cli', scope: 'admin' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_scope');
    assert.equal((await postForm(h, '/v1/oauth/device_authorization', { client_id: 'wsp-cli', scope: '' })).statusCode, 200);
  });

  test('the device code is stored only as its SHA-256, the user code normalized', async () => {
    const started = await startLogin(h);
    const rows = await h.database.db.selectFrom('device_authorizations').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(started.device_code), 'no plaintext device code at rest');
    const row = rows.find((r) => r.user_code === started.user_code.replace('-', ''));
    assert.ok(row, 'stored without the dash');
    assert.match(row.device_code_hash, /^[0-9a-f]{64}$/);
    assert.equal(row.state, 'pending');
  });

  test('user codes differ from one request to the next', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 20; i++) codes.add((await startLogin(h)).user_code);
    assert.equal(codes.size, 20);
  });

  test('the form parser is scoped to the OAuth endpoints: other routes still refuse forms with 415', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/api_tokens',
      headers: { authorization: `Bearer ${(await h.seed('Forms')).owner.session}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x',
    });
    assert.equal(res.statusCode, 415);
  });
});

describe('GET /.well-known/oauth-authorization-server', () => {
  test('RFC 8414 metadata: issuer is WSP_PUBLIC_URL, endpoints absolute under it', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    assert.equal(res.statusCode, 200);
    const m = res.json();
    assert.equal(m.issuer, 'https://wsp.example.test');
    assert.equal(m.device_authorization_endpoint, 'https://wsp.example.test/v1/oauth/device_authorization');
    assert.equal(m.token_endpoint, 'https://wsp.example.test/v1/oauth/token');
    assert.ok(m.grant_types_supported.includes('urn:ietf:params:oauth:grant-type:device_code'));
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ['none']);
  });
});
