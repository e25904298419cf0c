import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { secretClient, type Version } from './secret-client.js';

/**
 * Transitions under contention: the etag check and the write share one transaction, so of
 * concurrent writers holding the same etag exactly one changes the version, and what is
 * stored afterwards is what the winner was told.
 */
let api: ReturnType<typeof secretClient>;
const h = useTestApp({
  setup: async () => {
    api = secretClient(h, as(s.apiToken));
  },
});
const s = h.seeded;

type Action = 'enable' | 'disable' | 'destroy';

async function race(secretId: string, v: Version, actions: Action[]) {
  const responses = await Promise.all(actions.map((a) => api.transition(secretId, v.id, a, `"${v.etag}"`)));
  return responses.map((res, i) => ({ action: actions[i]!, status: res.statusCode, body: res.json() }));
}

async function versionIn(state: 'enabled' | 'disabled') {
  const secret = await api.createSecret();
  let v = await api.addVersion(secret.id, Buffer.from('contended'));
  if (state === 'disabled') v = (await api.transition(secret.id, v.id, 'disable', v.etag)).json();
  return { secretId: secret.id, v };
}

function assertOneWinner(results: Awaited<ReturnType<typeof race>>) {
  const winners = results.filter((r) => r.status === 200);
  assert.equal(winners.length, 1, JSON.stringify(results.map((r) => r.status)));
  const winner = winners[0]!;
  for (const r of results.filter((x) => x !== winner)) {
    assert.equal(r.status, 409);
    assert.equal(firstError(r.body).code, 7030);
    assert.deepEqual(firstError(r.body).metadata, { current_etag: winner.body.etag });
  }
  return winner;
}

for (const [from, action] of [
  ['disabled', 'enable'],
  ['enabled', 'disable'],
] as const) {
  test(`50 concurrent :${action} with one etag on a version that is ${from}: exactly one succeeds, and it is what is stored`, async () => {
    const { secretId, v } = await versionIn(from);
    const winner = assertOneWinner(await race(secretId, v, Array(50).fill(action)));
    assert.equal(winner.body.state, action === 'enable' ? 'enabled' : 'disabled');
    assert.deepEqual(await api.getVersion(secretId, v.id), winner.body);
  });
}

test('50 concurrent :disable and :destroy (every one a change): one winner, and the final state is its state', async () => {
  const { secretId, v } = await versionIn('enabled');
  const actions: Action[] = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? 'disable' : 'destroy'));
  const winner = assertOneWinner(await race(secretId, v, actions));
  const stored = await api.getVersion(secretId, v.id);
  assert.deepEqual(stored, winner.body);
  assert.equal(stored.state, winner.action === 'disable' ? 'disabled' : 'destroyed');
  const row = await h.database.db.selectFrom('secret_versions').select('ciphertext').where('id', '=', v.id).executeTakeFirstOrThrow();
  assert.equal(row.ciphertext === null, stored.state === 'destroyed');
});

test('50 concurrent :enable and :disable on an enabled version: exactly one changes it; enables that came first were no-ops', async () => {
  const { secretId, v } = await versionIn('enabled');
  const actions: Action[] = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? 'enable' : 'disable'));
  const results = await race(secretId, v, actions);
  const changes = results.filter((r) => r.status === 200 && r.body.etag !== v.etag);
  assert.equal(changes.length, 1, 'exactly one request changed the version');
  const winner = changes[0]!;
  assert.equal(winner.action, 'disable');
  assert.equal(winner.body.state, 'disabled');
  for (const r of results.filter((x) => x !== winner)) {
    if (r.status === 200) {
      // Serialized before the winner: enabling an enabled version changes nothing.
      assert.equal(r.action, 'enable');
      assert.deepEqual(r.body, v);
    } else {
      assert.equal(r.status, 409);
      assert.deepEqual(firstError(r.body).metadata, { current_etag: winner.body.etag });
    }
  }
  assert.deepEqual(await api.getVersion(secretId, v.id), winner.body);
});

test('20 concurrent version adds are numbered 1 to 20 without gaps or duplicates', async () => {
  const secret = await api.createSecret();
  const made = await Promise.all(Array.from({ length: 20 }, (_, i) => api.addVersion(secret.id, Buffer.from(`v${i}`))));
  assert.deepEqual(
    made.map((v) => v.version_number).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  // Each payload went to its own version (sealed with that version's id).
  for (const v of made) {
    const data = Buffer.from((await api.access(secret.id, v.id)).json().data, 'base64').toString();
    assert.match(data, /^v\d+$/);
  }
});
