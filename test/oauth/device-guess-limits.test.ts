import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { decide, startLogin } from './device-helpers.js';
import { GUESS_WINDOW_SECONDS, MAX_WRONG_CODES_PER_IP, MAX_WRONG_CODES_PER_USER } from '../../src/oauth/guess-limiter.js';

const h = useTestApp();
const s = h.seeded;

/** A code of the right shape that no login has: vowels are never drawn. */
const WRONG = 'AAAA-AAAA';

test('wrong user codes are limited per user across addresses: then 429 with Retry-After, even for a right code', async () => {
  const { owner } = s;
  for (let i = 0; i < MAX_WRONG_CODES_PER_USER; i++) {
    const res = await decide(h, 'approve', owner.session, WRONG, `10.1.0.${i}`);
    assert.equal(res.statusCode, 404, `guess ${i + 1}`);
  }
  const started = await startLogin(h);
  const limited = await decide(h, 'approve', owner.session, started.user_code, '10.1.1.1');
  assert.equal(limited.statusCode, 429);
  assert.equal(firstError(limited.json()).code, 7601);
  const retryAfter = Number(limited.headers['retry-after']);
  assert.ok(retryAfter > 0 && retryAfter <= GUESS_WINDOW_SECONDS, `Retry-After ${retryAfter}`);

  // Another user at another address is not affected.
  assert.equal((await decide(h, 'approve', s.admin.session, started.user_code, '10.1.2.1')).statusCode, 200);

  h.clock.advanceSeconds(retryAfter);
  const next = await startLogin(h);
  assert.equal((await decide(h, 'deny', owner.session, next.user_code, '10.1.1.1')).statusCode, 200, 'a new window');
});

test('right codes do not count as guesses', async () => {
  const { member } = s;
  for (let i = 0; i < MAX_WRONG_CODES_PER_USER + 2; i++) {
    const started = await startLogin(h);
    assert.equal((await decide(h, 'deny', member.session, started.user_code, '10.2.0.1')).statusCode, 200, `code ${i + 1}`);
  }
  for (let i = 0; i < MAX_WRONG_CODES_PER_USER; i++) assert.equal((await decide(h, 'deny', member.session, WRONG, '10.2.0.1')).statusCode, 404);
  assert.equal((await decide(h, 'deny', member.session, WRONG, '10.2.0.1')).statusCode, 429);
});

test('wrong user codes are limited per client address across users', async () => {
  const ip = '10.3.0.1';
  let sent = 0;
  while (sent < MAX_WRONG_CODES_PER_IP) {
    const { user_id } = await h.admin.createUser({ name: `guesser ${sent}` });
    const { session_token } = await h.admin.createSession(user_id);
    for (let i = 0; i < 5 && sent < MAX_WRONG_CODES_PER_IP; i++, sent++) assert.equal((await decide(h, 'approve', session_token, WRONG, ip)).statusCode, 404);
  }
  const { user_id } = await h.admin.createUser({ name: 'fresh' });
  const { session_token } = await h.admin.createSession(user_id);
  const res = await decide(h, 'approve', session_token, WRONG, ip);
  assert.equal(res.statusCode, 429);
  assert.ok(Number(res.headers['retry-after']) > 0);
  assert.equal((await decide(h, 'approve', session_token, WRONG, '10.3.0.2')).statusCode, 404, 'another address is not limited');
});

test('parallel wrong guesses cannot overshoot the limit', async () => {
  const { user_id } = await h.admin.createUser({ name: 'burst' });
  const { session_token } = await h.admin.createSession(user_id);
  const results = await Promise.all(Array.from({ length: 25 }, (_, i) => decide(h, 'approve', session_token, WRONG, `10.4.0.${i}`)));
  assert.equal(results.filter((r) => r.statusCode === 404).length, MAX_WRONG_CODES_PER_USER);
  assert.equal(results.filter((r) => r.statusCode === 429).length, 25 - MAX_WRONG_CODES_PER_USER);
});
