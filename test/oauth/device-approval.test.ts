import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { decide, poll, startLogin } from './device-helpers.js';

const h = useTestApp();
const s = h.seeded;

describe('POST /v1/oauth/device/approve and /deny', () => {
  test('the user code is accepted in lower case, with or without the dash, and with spaces', async () => {
    const forms = (code: string) => [code.toLowerCase(), code.replace('-', '').toLowerCase(), code.replace('-', ''), ` ${code.replace('-', ' ')} `];
    for (let i = 0; i < 4; i++) {
      const started = await startLogin(h);
      const typed = forms(started.user_code)[i]!;
      const res = await decide(h, 'approve', s.member.session, typed);
      assert.equal(res.statusCode, 200, `${JSON.stringify(typed)}: ${res.body}`);
      const body = res.json();
      assert.equal(body.user_code, started.user_code, 'answered in its display form');
      assert.equal(body.client_id, 'wsp-cli');
      assert.match(body.id, /^dev_[0-9a-z]{26}$/);
      assert.equal(body.state, 'approved');
      assert.equal(body.expires_at - body.created_at, 900);
    }
  });

  test('a code that is not 8 letters (with an optional dash) is 422 on body.user_code', async () => {
    for (const user_code of ['', 'BCDF', 'BCDF-GHJKL', 'BCDF--GHJK', '1234-5678', 'BCDF_GHJK']) {
      const res = await decide(h, 'approve', s.member.session, user_code);
      assert.equal(res.statusCode, 422, `${user_code}: ${res.body}`);
      assert.deepEqual(firstError(res.json()).path, ['body', 'user_code']);
    }
    const extra = await h.app.inject({ method: 'POST', url: '/v1/oauth/device/deny', headers: as(s.member.session), payload: { user_code: 'BCDF-GHJK', x: 1 } });
    assert.deepEqual(firstError(extra.json()).path, ['body', 'x']);
  });

  test('a code that names no pending login is 404 (7600)', async () => {
    const res = await decide(h, 'approve', s.member.session, 'BCDF-GHJK', '10.9.9.1');
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7600);
    assert.deepEqual(firstError(res.json()).path, ['body', 'user_code']);
  });

  test('a decided login cannot be decided again (409, 7602), and denial after approval does not revoke it', async () => {
    const started = await startLogin(h);
    assert.equal((await decide(h, 'approve', s.owner.session, started.user_code)).statusCode, 200);
    for (const d of ['approve', 'deny'] as const) {
      const again = await decide(h, d, s.admin.session, started.user_code);
      assert.equal(again.statusCode, 409);
      assert.equal(firstError(again.json()).code, 7602);
    }
    h.clock.advanceSeconds(5);
    assert.equal((await poll(h, started.device_code)).statusCode, 200);
    const afterRedeem = await decide(h, 'deny', s.owner.session, started.user_code);
    assert.equal(afterRedeem.statusCode, 409);
  });

  test('a workspace API token cannot approve (403); no credential is 401', async () => {
    const started = await startLogin(h);
    const res = await decide(h, 'approve', s.apiToken, started.user_code);
    assert.equal(res.statusCode, 403);
    assert.equal(firstError(res.json()).code, 7024);
    const anon = await h.app.inject({ method: 'POST', url: '/v1/oauth/device/approve', payload: { user_code: started.user_code } });
    assert.equal(anon.statusCode, 401);
    assert.equal((await poll(h, started.device_code)).json().error, 'authorization_pending');
  });

  test('a malformed Service-Context is 422 even though none is needed', async () => {
    const started = await startLogin(h);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/oauth/device/approve',
      headers: as(s.member.session, 'not-a-workspace'),
      payload: { user_code: started.user_code },
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['headers', 'service-context']);
  });

  test('the same Idempotency-Key replays the approval instead of answering 409', async () => {
    const started = await startLogin(h);
    const send = () =>
      h.app.inject({ method: 'POST', url: '/v1/oauth/device/approve', headers: as(s.member.session, undefined, { 'idempotency-key': 'approve-1' }), payload: { user_code: started.user_code } });
    const first = await send();
    const second = await send();
    assert.equal(first.statusCode, 200);
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.json(), first.json());
  });
});
