import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { createTestApp, as, type TestApp, type Seed } from '../helpers/harness.js';

/**
 * Issue 9.3, races in one process (tests/cli/two-servers and test/reliability/instances do it
 * across processes). Lost updates on the etag'd writes that the area suites do not already race
 * (workspaces, secret versions, dashboard PATCH/restore/reset, snippet PATCH/archive, install
 * restore are raced there), Idempotency-Key storms on creations, and a token revoked while
 * requests are in flight.
 */
const N = 12;

let h: TestApp;
let s: Seed;
before(async () => {
  h = await createTestApp();
  s = await h.seed();
});
after(() => h.close());

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
const call = (method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) =>
  h.app.inject({ method: method as 'GET', url, headers: as(s.owner.session, s.workspaceId, extra), ...(payload === undefined ? {} : { payload: payload as object }) });
async function ok(method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) {
  const res = await call(method, url, payload, extra);
  assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${method} ${url} -> ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
}

async function installOf() {
  const pkg = await ok('POST', '/v1/packages', { name: `race-${Math.random()}` });
  const v = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': '{{who}}' } });
  const inst = await ok('POST', '/v1/installs', { name: `race-${Math.random()}`, package_id: pkg.id, version_id: v.id, values: { who: 'a' } });
  await h.app.jobs.runDue();
  return { pkg, v, inst: await ok('GET', `/v1/installs/${inst.id}`) };
}

async function runningMachine() {
  const cc = await ok('POST', '/v1/compute/configs', { name: 'race', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04' });
  const m = await ok('POST', '/v1/machines', { compute_config_id: cc.id, server_type: 'cx22' });
  await h.app.jobs.runDue();
  return ok('GET', `/v1/machines/${m.id}`);
}

interface Race {
  name: string;
  /** Makes the resource; returns its URL for reading and its etag. */
  setup: () => Promise<{ read: string; etag: string }>;
  /** The i-th concurrent write, all with the same If-Match. */
  write: (read: string, etag: string, i: number) => Promise<Res>;
  winner: number;
  /** Checks what is stored after the race, given the winner's answer. */
  verify?: (read: string, winner: Res, index: number) => Promise<void>;
}

const RACES: Race[] = [
  {
    name: 'PATCH /v1/installs/{id}',
    setup: async () => {
      const { inst } = await installOf();
      return { read: `/v1/installs/${inst.id}`, etag: inst.etag };
    },
    write: (read, etag, i) => call('PATCH', read, { values: { who: `w${i}` } }, { 'if-match': `"${etag}"` }),
    winner: 200,
    verify: async (read, winner, i) => {
      const now = await ok('GET', read);
      assert.deepEqual(now.values, { who: `w${i}` });
      assert.equal(now.etag, winner.json().etag);
      const renders = (await ok('GET', `${read}/renders`)).data;
      assert.equal(renders.length, 2, 'one render for the install, one for the one winning PATCH');
    },
  },
  {
    name: 'DELETE /v1/compute/configs/{id}',
    setup: async () => {
      const cc = await ok('POST', '/v1/compute/configs', { name: 'race', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04' });
      const got = await ok('GET', `/v1/compute/configs/${cc.id}`);
      return { read: `/v1/compute/configs/${cc.id}`, etag: got.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 204,
  },
  {
    name: 'POST /v1/machines/{id}:suspend',
    setup: async () => {
      const m = await runningMachine();
      return { read: `/v1/machines/${m.id}`, etag: m.etag };
    },
    write: (read, etag) => call('POST', `${read}:suspend`, {}, { 'if-match': etag }),
    winner: 200,
    verify: async (read) => {
      await h.app.jobs.runDue();
      assert.equal((await ok('GET', read)).status, 'suspended');
      assert.equal((await ok('GET', '/v1/compute/suspensions')).length, 1, 'one suspension');
    },
  },
  {
    name: 'DELETE /v1/secrets/{id}',
    setup: async () => {
      const sec = await ok('POST', '/v1/secrets', { name: `race-${Math.random()}` });
      await ok('POST', `/v1/secrets/${sec.id}/versions`, { data: 'AQID' });
      const got = await ok('GET', `/v1/secrets/${sec.id}`);
      return { read: `/v1/secrets/${sec.id}`, etag: got.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 204,
  },
  {
    name: 'DELETE /v1/dashboards/{id}',
    setup: async () => {
      const d = await ok('POST', '/v1/dashboards', { name: 'race', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] });
      return { read: `/v1/dashboards/${d.id}`, etag: d.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 204,
  },
  {
    name: 'DELETE /v1/snippets/{id}',
    setup: async () => {
      const snp = await ok('POST', '/v1/snippets', { name: 'race', source: 'select 1' });
      return { read: `/v1/snippets/${snp.id}`, etag: snp.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 204,
  },
  {
    name: 'POST /v1/snippets/{id}:unarchive',
    setup: async () => {
      const snp = await ok('POST', '/v1/snippets', { name: 'race', source: 'select 1' });
      const archived = await ok('POST', `/v1/snippets/${snp.id}:archive`, undefined, { 'if-match': snp.etag });
      return { read: `/v1/snippets/${snp.id}`, etag: archived.etag };
    },
    write: (read, etag) => call('POST', `${read}:unarchive`, undefined, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner) => {
      const now = await ok('GET', read);
      assert.equal(now.state, 'active');
      assert.equal(now.etag, winner.json().etag);
    },
  },
];

for (const race of RACES) {
  test(`${N} concurrent ${race.name} with one If-Match: exactly one wins, the others are refused`, async () => {
    const { read, etag } = await race.setup();
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => race.write(read, etag, i)));
    const statuses = answers.map((r) => r.statusCode);
    const winners = answers.map((r, i) => [r, i] as const).filter(([r]) => r.statusCode === race.winner);
    assert.equal(winners.length, 1, statuses.join(','));
    for (const r of answers) {
      if (r === winners[0]![0]) continue;
      // A loser is told the etag moved; after a delete, the resource may already be gone.
      assert.ok(r.statusCode === 409 || (race.winner === 204 && r.statusCode === 404), `${r.statusCode} ${r.body}`);
      assert.equal(r.json().errors[0].code, r.statusCode === 409 ? 7030 : 7002, r.body);
    }
    if (race.winner === 204) assert.equal((await call('GET', read)).statusCode, 404);
    await race.verify?.(read, winners[0]![0], winners[0]![1]);
  });
}

test('Idempotency-Key storms: one secret version and one install restore however many retries race', async () => {
  const sec = await ok('POST', '/v1/secrets', { name: 'storm' });
  const adds = await Promise.all(Array.from({ length: N }, () => call('POST', `/v1/secrets/${sec.id}/versions`, { data: 'c3Rvcm0=' }, { 'idempotency-key': 'storm-version' })));
  const created = adds.filter((r) => r.statusCode === 201);
  assert.ok(created.length >= 1, adds.map((r) => r.statusCode).join(','));
  for (const r of adds) {
    if (r.statusCode === 201) assert.deepEqual(r.json(), created[0]!.json(), 'a replay is the same version');
    else assert.deepEqual([r.statusCode, r.json().errors[0].code], [409, 7031]);
  }
  assert.equal(created.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1);
  assert.equal((await ok('GET', `/v1/secrets/${sec.id}/versions`)).data.length, 1);

  const { inst } = await installOf();
  const first = (await ok('GET', `/v1/installs/${inst.id}/renders`)).data[0];
  await ok('PATCH', `/v1/installs/${inst.id}`, { values: { who: 'b' } }, { 'if-match': inst.etag });
  await h.app.jobs.runDue();
  const etag = (await ok('GET', `/v1/installs/${inst.id}`)).etag;
  const restores = await Promise.all(
    Array.from({ length: N }, () => call('POST', `/v1/installs/${inst.id}:restore`, { render_id: first.id }, { 'if-match': etag, 'idempotency-key': 'storm-restore' })),
  );
  const fresh = restores.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
  assert.equal(fresh.length, 1, restores.map((r) => r.statusCode).join(','));
  for (const r of restores) {
    if (r.statusCode === 200) assert.deepEqual(r.json(), fresh[0]!.json());
    else assert.deepEqual([r.statusCode, r.json().errors[0].code], [409, 7031], r.body);
  }
  assert.equal((await ok('GET', `/v1/installs/${inst.id}/renders`)).data.length, 3, 'one restore render');
});

test('a token revoked while requests are in flight: every request that starts after the revocation answered is 401', async () => {
  const created = await ok('POST', '/v1/api_tokens', { name: 'in flight' });
  const log: { started: number; status: number }[] = [];
  let revokedAt = Infinity;
  let stop = false;
  const lane = async () => {
    while (!stop) {
      const started = performance.now();
      const res = await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as(created.token) });
      log.push({ started, status: res.statusCode });
      // In-process requests can complete on microtasks alone: yield, or nothing else ever runs.
      await new Promise((r) => setImmediate(r));
    }
  };
  const lanes = Array.from({ length: 6 }, lane);
  // Let the stream run, revoke in the middle of it, then let it run on.
  while (log.length < 60) await new Promise((r) => setImmediate(r));
  const del = await call('DELETE', `/v1/api_tokens/${created.id}`);
  revokedAt = performance.now();
  assert.equal(del.statusCode, 204);
  const atRevocation = log.length;
  while (log.length < atRevocation + 60) await new Promise((r) => setImmediate(r));
  stop = true;
  await Promise.all(lanes);

  const before = log.filter((x) => x.started < revokedAt);
  const afterwards = log.filter((x) => x.started > revokedAt);
  assert.ok(before.filter((x) => x.status === 200).length >= 30, 'the token worked before');
  assert.ok(afterwards.length >= 50, `${afterwards.length} requests after`);
  assert.deepEqual([...new Set(afterwards.map((x) => x.status))], [401], 'no request that started after the revocation succeeded');
  for (const x of log) assert.ok(x.status === 200 || x.status === 401, String(x.status));
});
