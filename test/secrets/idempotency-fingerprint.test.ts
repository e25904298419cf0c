import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { secretClient } from './secret-client.js';

const h = useTestApp();
const s = h.seeded;

test('an Idempotency-Key keeps no guessable trace of a secret payload', async () => {
  const client = secretClient(h, as(s.apiToken));
  const secret = await client.createSecret();
  const payload = { data: Buffer.from('1234').toString('base64') };
  const url = `/v1/secrets/${secret.id}/versions`;
  const res = await h.app.inject({ method: 'POST', url, headers: as(s.apiToken, undefined, { 'idempotency-key': 'k1' }), payload });
  assert.equal(res.statusCode, 201);
  const replay = await h.app.inject({ method: 'POST', url, headers: as(s.apiToken, undefined, { 'idempotency-key': 'k1' }), payload });
  assert.equal(replay.headers['idempotent-replayed'], 'true');

  const row = await h.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', 'k1').executeTakeFirstOrThrow();
  // An attacker with the table and the guess "1234" cannot confirm it without the server key.
  const guessed = createHash('sha256')
    .update(JSON.stringify(['POST', url, payload, null]))
    .digest('hex');
  assert.notEqual(row.fingerprint, guessed);
  assert.ok(!JSON.stringify(row).includes(payload.data));
  assert.ok(!(row.response_body ?? '').includes(payload.data), 'the stored answer does not hold the payload');
});
