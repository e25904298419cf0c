import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { decide, GRANT, poll, postForm, startLogin } from './device-helpers.js';

const h = useTestApp({ config: { oauthClientIds: ['wsp-cli', 'other-cli'] } });
const s = h.seeded;

const errorOf = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => {
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.headers['cache-control'], 'no-store');
  return (JSON.parse(res.body) as { error: string }).error;
};

const sessionsOf = async (userId: string) =>
  Number(
    (
      await h.database.db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /v1/oauth/token', () => {
  test('pending, then approved: the next poll gets a new session token of the approver, once', async () => {
    const started = await startLogin(h);
    assert.equal(errorOf(await poll(h, started.device_code)), 'authorization_pending');
    const before = await sessionsOf(s.member.userId);
    const approved = await decide(h, 'approve', s.member.session, started.user_code);
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().state, 'approved');
    // Nothing secret waits in the database: the session is made when the device redeems.
    assert.equal(await sessionsOf(s.member.userId), before);

    h.clock.advanceSeconds(5);
    const res = await poll(h, started.device_code);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const token = res.json();
    assert.deepEqual(Object.keys(token).sort(), ['access_token', 'token_type']);
    assert.equal(token.token_type, 'Bearer');
    assert.match(token.access_token, /^[A-Za-z0-9]{32}$/);
    assert.equal(await sessionsOf(s.member.userId), before + 1);

    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(token.access_token) });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().credential.kind, 'session');
    assert.equal(me.json().user.id, s.member.userId);

    h.clock.advanceSeconds(5);
    assert.equal(errorOf(await poll(h, started.device_code)), 'invalid_grant', 'a device code is redeemed once');
  });

  test('a poll sooner than the interval is slow_down, and the interval grows by 5 s each time', async () => {
    const started = await startLogin(h);
    assert.equal(errorOf(await poll(h, started.device_code)), 'authorization_pending');
    h.clock.advanceSeconds(4);
    assert.equal(errorOf(await poll(h, started.device_code)), 'slow_down');
    // Each slow_down also counts as a poll: the next wait starts from it, at the grown interval.
    for (const [wait, interval] of [
      [9, 10],
      [14, 15],
    ] as const) {
      h.clock.advanceSeconds(wait);
      assert.equal(errorOf(await poll(h, started.device_code)), 'slow_down', `${wait} s is sooner than ${interval} s`);
    }
    h.clock.advanceSeconds(20);
    assert.equal(errorOf(await poll(h, started.device_code)), 'authorization_pending');
    const row = await h.database.db.selectFrom('device_authorizations').select('interval_seconds').where('user_code', '=', started.user_code.replace('-', '')).executeTakeFirstOrThrow();
    assert.equal(row.interval_seconds, 20);
  });

  test('polling at exactly the interval is never slowed down', async () => {
    const started = await startLogin(h);
    for (let i = 0; i < 4; i++) {
      assert.equal(errorOf(await poll(h, started.device_code)), 'authorization_pending');
      h.clock.advanceSeconds(5);
    }
  });

  test('half a second of network jitter is tolerated, more is slow_down', async () => {
    const started = await startLogin(h);
    assert.equal(errorOf(await poll(h, started.device_code)), 'authorization_pending');
    h.clock.advanceSeconds(4.5);
    assert.equal(errorOf(await poll(h, started.device_code)), 'authorization_pending');
    h.clock.advanceSeconds(4.4);
    assert.equal(errorOf(await poll(h, started.device_code)), 'slow_down');
  });

  test('denied: access_denied, and no session is made', async () => {
    const started = await startLogin(h);
    const before = await sessionsOf(s.admin.userId);
    const denied = await decide(h, 'deny', s.admin.session, started.user_code);
    assert.equal(denied.statusCode, 200);
    assert.equal(denied.json().state, 'denied');
    assert.equal(errorOf(await poll(h, started.device_code)), 'access_denied');
    h.clock.advanceSeconds(5);
    assert.equal(errorOf(await poll(h, started.device_code)), 'access_denied');
    assert.equal(await sessionsOf(s.admin.userId), before);
  });

  test('after 900 s the code is expired_token, approved or not', async () => {
    const pending = await startLogin(h);
    const approved = await startLogin(h);
    assert.equal((await decide(h, 'approve', s.owner.session, approved.user_code)).statusCode, 200);
    h.clock.advanceSeconds(900);
    assert.equal(errorOf(await poll(h, pending.device_code)), 'expired_token');
    assert.equal(errorOf(await poll(h, approved.device_code)), 'expired_token');
    const late = await decide(h, 'approve', s.owner.session, pending.user_code);
    assert.equal(late.statusCode, 404, 'an expired code cannot be approved');
  });

  test('a wrong device code, or another client’s, is invalid_grant', async () => {
    assert.equal(errorOf(await poll(h, 'not-a-device-code')), 'invalid_grant');
    const started = await startLogin(h);
    assert.equal((await decide(h, 'approve', s.owner.session, started.user_code)).statusCode, 200);
    assert.equal(errorOf(await poll(h, started.device_code, 'other-cli')), 'invalid_grant');
    // The rightful client still gets its token.
    assert.equal((await poll(h, started.device_code)).statusCode, 200);
  });

  test('bad requests: invalid_request, unsupported_grant_type, invalid_client', async () => {
    const started = await startLogin(h);
    const cases: [Record<string, string>, string][] = [
      [{ client_id: 'wsp-cli', device_code: started.device_code }, 'invalid_request'],
      [{ grant_type: GRANT, device_code: started.device_code }, 'invalid_request'],
      [{ grant_type: GRANT, client_id: 'wsp-cli' }, 'invalid_request'],
      [{ grant_type: 'password', client_id: 'wsp-cli' }, 'unsupported_grant_type'],
      [{ grant_type: 'authorization_code', client_id: 'wsp-cli', device_code: started.device_code }, 'unsupported_grant_type'],
      [{ grant_type: GRANT, client_id: 'nobody', device_code: started.device_code }, 'invalid_client'],
    ];
    for (const [fields, expected] of cases) assert.equal(errorOf(await postForm(h, '/v1/oauth/token', fields)), expected, JSON.stringify(fields));
    // None of those polls counted: the real poll is not slowed down.
    assert.equal(errorOf(await poll(h, started.device_code)), 'authorization_pending');
  });

  test('JSON polls work like form polls', async () => {
    const started = await startLogin(h);
    const res = await h.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: GRANT, client_id: 'wsp-cli', device_code: started.device_code } });
    assert.equal(errorOf(res), 'authorization_pending');
  });

  test('racing polls after approval: exactly one gets a token', async () => {
    const started = await startLogin(h);
    assert.equal((await decide(h, 'approve', s.owner.session, started.user_code)).statusCode, 200);
    const results = await Promise.all(Array.from({ length: 6 }, () => poll(h, started.device_code)));
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1, results.map((r) => r.body).join('\n'));
    for (const r of results.filter((x) => x.statusCode !== 200)) assert.ok(['slow_down', 'invalid_grant'].includes(r.json().error), r.body);
  });

  test('the hourly purge: an hour after expiry a code is gone (invalid_grant), and old guess windows too', async () => {
    const started = await startLogin(h);
    await decide(h, 'approve', s.owner.session, 'ZZZZ-ZZZZ', '10.66.0.1');
    h.clock.advanceSeconds(900 + 3599);
    await h.app.jobs.runDue();
    assert.equal(errorOf(await poll(h, started.device_code)), 'expired_token', 'kept for an hour after expiry');
    h.clock.advanceSeconds(3600);
    await h.app.jobs.runDue();
    assert.equal(errorOf(await poll(h, started.device_code)), 'invalid_grant');
    const windows = await h.database.db.selectFrom('device_guess_limits').select('key').where('key', '=', 'ip:10.66.0.1').execute();
    assert.deepEqual(windows, []);
  });
});
