import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { as, type TestApp } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { repoRoot } from '../../src/config.js';
import { documentRoutes } from '../security/tenant-fixture.js';
import { git } from './servers.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Issue 9.3, races in one process (test/reliability/instances.test.ts does it across processes):
 * - lost updates: for EVERY route of the OpenAPI document that requires If-Match (the list is
 *   read from the document; a route missing from RACES fails the run), N concurrent writers
 *   with the same If-Match: exactly one wins, every other is told the etag moved (409 7030) or,
 *   after a delete, that the resource is gone (404 7002), and what is stored is the winner's;
 * - Idempotency-Key storms: N retries of one secret version add make one version; N retries
 *   of one install restore make one git commit on main;
 * - a token revoked while requests are in flight: no request that started after the
 *   revocation was committed succeeds (judged against a committed marker, not the DELETE's answer).
 * WSP_RACE_N sets N (default 12; npm run soak:fuzz raises it).
 */
const N = Number(process.env.WSP_RACE_N ?? 12);

const h = useTestApp();
const s = h.seeded;

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
const call = (method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) =>
  h.app.inject({ method: method as 'GET', url, headers: as(s.owner.session, s.workspaceId, extra), ...(payload === undefined ? {} : { payload: payload as object }) });
async function ok(method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) {
  const res = await call(method, url, payload, extra);
  assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${method} ${url} -> ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
}

/** Commits on main of an install's repository. */
function commitsOn(installId: string): number {
  return Number(git(path.join(repoRoot(h.config), `${installId}.git`), 'rev-list', '--count', 'refs/heads/main'));
}

async function installOf() {
  const pkg = await ok('POST', '/v1/packages', { name: `race-${Math.random()}` });
  const v = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': '{{who}}' } });
  const inst = await ok('POST', '/v1/installs', { name: `race-${Math.random()}`, package_id: pkg.id, version_id: v.id, values: { who: 'a' } });
  await h.app.jobs.runDue();
  return { pkg, v, inst: await ok('GET', `/v1/installs/${inst.id}`) };
}

/**
 * An install under review with one open change request (docs/spec-gaps.md, "Repository change requests"), opened by the
 * workspace's API token, so that the owner (who races) is not its author and may approve it.
 */
async function openChangeRequest() {
  const { inst } = await installOf();
  const patched = await h.app.inject({
    method: 'PATCH',
    url: `/v1/installs/${inst.id}`,
    headers: as(s.apiToken, undefined, { 'if-match': inst.etag }),
    payload: { delivery: 'change_request', values: { who: 'b' } },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  await h.app.jobs.runDue();
  const render = await ok('GET', `/v1/renders/${patched.json().last_render.id}`);
  const cr = await ok('GET', `/v1/repository_change_requests/${render.repository_change_request_id}`);
  return { read: `/v1/repository_change_requests/${cr.id}`, etag: cr.etag as string, extra: inst.id as string };
}

/** A transition of a change request: exactly one writer moves it; the stored one is the winner's. */
function changeRequestRace(action: 'approve' | 'merge' | 'close', state: string, check?: (read: string, installId: string) => Promise<void>): Race {
  return {
    name: `POST /v1/repository_change_requests/{id}:${action}`,
    setup: openChangeRequest,
    write: (read, etag) => call('POST', `${read}:${action}`, undefined, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner) => {
      const now = await ok('GET', read);
      assert.equal(now.state, state);
      assert.deepEqual(now, winner.json());
      if (action === 'approve') assert.equal(now.approvals.length, 1);
      await check?.(read, (now as { install_id: string }).install_id);
    },
  };
}

async function runningMachine() {
  const cc = await ok('POST', '/v1/compute/configs', { name: 'race', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04' });
  const m = await ok('POST', '/v1/machines', { compute_config_id: cc.id, server_type: 'cx22' });
  await h.app.jobs.runDue();
  return ok('GET', `/v1/machines/${m.id}`);
}

interface Race {
  /** The route, as the OpenAPI document names it. */
  name: string;
  /** Makes the resource; returns its URL for reading, its etag, and anything else the write needs. */
  setup: () => Promise<{ read: string; etag: string; extra?: string }>;
  /** The i-th concurrent write, all with the same If-Match. */
  write: (read: string, etag: string, i: number, extra?: string) => Promise<Res>;
  winner: number;
  /** The winner makes the resource read 404 at once (a 204 delete, or an install's 202 one): losers may be told so. */
  gone?: boolean;
  /** Checks what is stored after the race, given the winner's answer. */
  verify?: (read: string, winner: Res, index: number) => Promise<void>;
}

async function secretVersion(state: 'enabled' | 'disabled') {
  const sec = await ok('POST', '/v1/secrets', { name: `race-${Math.random()}` });
  let v = await ok('POST', `/v1/secrets/${sec.id}/versions`, { data: 'AQID' });
  if (state === 'disabled') v = await ok('POST', `/v1/secrets/${sec.id}/versions/${v.id}:disable`, undefined, { 'if-match': v.etag });
  return { read: `/v1/secrets/${sec.id}/versions/${v.id}`, etag: v.etag as string };
}

/** A transition of a secret version: the winner's state is the one stored. */
function versionRace(action: 'enable' | 'disable' | 'destroy', from: 'enabled' | 'disabled', to: string): Race {
  return {
    name: `POST /v1/secrets/{id}/versions/{vid}:${action}`,
    setup: () => secretVersion(from),
    write: (read, etag) => call('POST', `${read}:${action}`, undefined, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner) => {
      const now = await ok('GET', read);
      assert.equal(now.state, to);
      assert.deepEqual(now, winner.json());
    },
  };
}

async function dashboard(purpose: 'custom' | 'workspace_overview' = 'custom') {
  return ok('POST', '/v1/dashboards', { name: 'race', purpose, filter_definitions: [], default_filter_values: {}, widgets: [] });
}

/** The dashboard's revisions after a race: one new revision, the winner's. */
async function oneNewRevision(read: string, winner: Res, before: number) {
  const now = await ok('GET', read);
  assert.equal(now.etag, winner.json().etag);
  assert.equal((await ok('GET', `${read}/revisions?limit=10`)).data.length, before + 1, 'one new revision');
}

const RACES: Race[] = [
  {
    name: 'PATCH /v1/workspaces/{id}',
    setup: async () => {
      const ws = await ok('GET', `/v1/workspaces/${s.workspaceId}`);
      return { read: `/v1/workspaces/${s.workspaceId}`, etag: ws.etag };
    },
    write: (read, etag, i) => call('PATCH', read, { name: `ws ${i}` }, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner, i) => {
      const now = await ok('GET', read);
      assert.equal(now.name, `ws ${i}`);
      assert.equal(now.etag, winner.json().etag);
    },
  },
  versionRace('enable', 'disabled', 'enabled'),
  versionRace('disable', 'enabled', 'disabled'),
  versionRace('destroy', 'enabled', 'destroyed'),
  {
    name: 'POST /v1/installs/{id}:restore',
    setup: async () => {
      const { inst } = await installOf();
      const first = (await ok('GET', `/v1/installs/${inst.id}/renders`)).data[0];
      await ok('PATCH', `/v1/installs/${inst.id}`, { values: { who: 'b' } }, { 'if-match': inst.etag });
      await h.app.jobs.runDue();
      const now = await ok('GET', `/v1/installs/${inst.id}`);
      return { read: `/v1/installs/${inst.id}`, etag: now.etag, extra: first.id };
    },
    write: (read, etag, i, extra) => call('POST', `${read}:restore`, { render_id: extra }, { 'if-match': etag, 'idempotency-key': `race-restore-${i}` }),
    winner: 200,
    verify: async (read, winner) => {
      const now = await ok('GET', read);
      assert.equal(String(winner.headers.etag).replace(/"/g, ''), now.etag);
      assert.deepEqual(now.values, { who: 'a' }, 'the restored values');
      const renders = (await ok('GET', `${read}/renders`)).data;
      assert.equal(renders.filter((r: { restored_from_render_id: string | null }) => r.restored_from_render_id).length, 1, 'one restore render');
      assert.equal(commitsOn(read.split('/').pop()!), 3, 'two renders and one restore on main');
    },
  },
  changeRequestRace('approve', 'open'),
  changeRequestRace('merge', 'merged', async (read, installId) => {
    assert.equal(commitsOn(installId), 2, 'main moved once, to the head');
    assert.equal((await ok('GET', `/v1/installs/${installId}/repository`)).head_commit_sha, (await ok('GET', read)).head_commit_sha);
  }),
  changeRequestRace('close', 'closed', async (_read, installId) => assert.equal(commitsOn(installId), 1, 'main stays')),
  {
    name: 'POST /v1/repository_change_requests/{id}:reopen',
    setup: async () => {
      const opened = await openChangeRequest();
      const closed = await ok('POST', `${opened.read}:close`, undefined, { 'if-match': opened.etag });
      return { ...opened, etag: closed.etag };
    },
    write: (read, etag) => call('POST', `${read}:reopen`, undefined, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner) => {
      const now = await ok('GET', read);
      assert.equal(now.state, 'open');
      assert.deepEqual(now, winner.json());
      assert.equal((await ok('GET', `/v1/renders/${now.render_id}`)).state, 'awaiting_merge');
    },
  },
  {
    name: 'PATCH /v1/repository_change_requests/{id}',
    setup: openChangeRequest,
    write: (read, etag, i) => call('PATCH', read, { title: `title ${i}` }, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner, i) => {
      const now = await ok('GET', read);
      assert.equal(now.title, `title ${i}`);
      assert.equal(now.etag, winner.json().etag);
    },
  },
  {
    name: 'PATCH /v1/snippets/{id}',
    setup: async () => {
      const snp = await ok('POST', '/v1/snippets', { name: 'race', source: 'select 1' });
      return { read: `/v1/snippets/${snp.id}`, etag: snp.etag };
    },
    write: (read, etag, i) => call('PATCH', read, { name: `snippet ${i}` }, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner, i) => {
      const now = await ok('GET', read);
      assert.equal(now.name, `snippet ${i}`);
      assert.equal(now.etag, winner.json().etag);
    },
  },
  {
    name: 'POST /v1/snippets/{id}:archive',
    setup: async () => {
      const snp = await ok('POST', '/v1/snippets', { name: 'race', source: 'select 1' });
      return { read: `/v1/snippets/${snp.id}`, etag: snp.etag };
    },
    write: (read, etag) => call('POST', `${read}:archive`, undefined, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner) => {
      const now = await ok('GET', read);
      assert.equal(now.state, 'archived');
      assert.equal(now.etag, winner.json().etag);
    },
  },
  {
    name: 'PATCH /v1/dashboards/{id}',
    setup: async () => {
      const d = await dashboard();
      return { read: `/v1/dashboards/${d.id}`, etag: d.etag };
    },
    write: (read, etag, i) => call('PATCH', read, { name: `dash ${i}` }, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner, i) => {
      assert.equal((await ok('GET', read)).name, `dash ${i}`);
      await oneNewRevision(read, winner, 1);
    },
  },
  {
    name: 'POST /v1/dashboards/{id}:reset',
    setup: async () => {
      const d = await dashboard('workspace_overview');
      return { read: `/v1/dashboards/${d.id}`, etag: d.etag };
    },
    write: (read, etag) => call('POST', `${read}:reset`, {}, { 'if-match': etag }),
    winner: 200,
    verify: (read, winner) => oneNewRevision(read, winner, 1),
  },
  {
    name: 'POST /v1/dashboards/{id}/revisions/{revision_id}:restore',
    setup: async () => {
      const d = await dashboard();
      const v2 = await ok('PATCH', `/v1/dashboards/${d.id}`, { name: 'v2' }, { 'if-match': d.etag });
      return { read: `/v1/dashboards/${d.id}`, etag: v2.etag, extra: d.current_revision_id };
    },
    write: (read, etag, _i, extra) => call('POST', `${read}/revisions/${extra}:restore`, {}, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner) => {
      assert.equal((await ok('GET', read)).name, 'race');
      await oneNewRevision(read, winner, 2);
    },
  },
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
    name: 'DELETE /v1/installs/{id}',
    setup: async () => {
      const { inst } = await installOf();
      return { read: `/v1/installs/${inst.id}`, etag: inst.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 202,
    gone: true,
    verify: async (read, winner) => {
      const jobs = await h.database.db.selectFrom('jobs').select('id').where('operation_id', '=', winner.json().operation_id).execute();
      assert.equal(jobs.length, 1, 'one removal job');
      assert.equal((await call('GET', read)).statusCode, 404);
    },
  },
  {
    name: 'DELETE /v1/packages/{id}',
    setup: async () => {
      const pkg = await ok('POST', '/v1/packages', { name: `race-${Math.random()}` });
      return { read: `/v1/packages/${pkg.id}`, etag: pkg.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 204,
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
    name: 'PATCH /v1/clusters/{id}',
    setup: async () => {
      const c = await ok('POST', '/v1/clusters', { name: `race-${Math.random().toString(36).slice(2, 10)}`, region: 'fsn1' });
      return { read: `/v1/clusters/${c.id}`, etag: c.etag };
    },
    write: (read, etag, i) => call('PATCH', read, { name: `${read.slice(-8)}-${i}` }, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner, i) => {
      const now = await ok('GET', read);
      assert.equal(now.name, `${read.slice(-8)}-${i}`);
      assert.equal(now.etag, winner.json().etag);
    },
  },
  {
    name: 'DELETE /v1/clusters/{id}',
    setup: async () => {
      const c = await ok('POST', '/v1/clusters', { name: `race-${Math.random().toString(36).slice(2, 10)}`, region: 'fsn1' });
      return { read: `/v1/clusters/${c.id}`, etag: c.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 204,
    gone: true,
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
    name: 'DELETE /v1/machines/{id}',
    setup: async () => {
      const m = await runningMachine();
      return { read: `/v1/machines/${m.id}`, etag: m.etag };
    },
    write: (read, etag) => call('DELETE', read, undefined, { 'if-match': etag }),
    winner: 202,
    verify: async (read, winner) => {
      const jobs = await h.database.db.selectFrom('jobs').select('id').where('operation_id', '=', winner.json().operation_id).execute();
      assert.equal(jobs.length, 1, 'one deletion job');
      await h.app.jobs.runDue();
      assert.equal((await call('GET', read)).statusCode, 404);
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
    name: 'PATCH /v1/webhooks/{id}',
    setup: async () => {
      const wh = await ok('POST', '/v1/webhooks', { url: 'https://93.184.216.34/race', event_types: ['secret.*'] });
      return { read: `/v1/webhooks/${wh.id}`, etag: wh.etag };
    },
    write: (read, etag, i) => call('PATCH', read, { description: `webhook ${i}` }, { 'if-match': etag }),
    winner: 200,
    verify: async (read, winner, i) => {
      const now = await ok('GET', read);
      assert.equal(now.description, `webhook ${i}`);
      assert.equal(now.etag, winner.json().etag);
    },
  },
  {
    name: 'DELETE /v1/webhooks/{id}',
    setup: async () => {
      const wh = await ok('POST', '/v1/webhooks', { url: 'https://93.184.216.34/race', event_types: ['secret.*'] });
      return { read: `/v1/webhooks/${wh.id}`, etag: wh.etag };
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

test('every route that requires If-Match is raced here', () => {
  const required = documentRoutes(h)
    .filter((r) => (r.op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'if-match' && p.required))
    .map((r) => r.key)
    .sort();
  assert.ok(required.length >= 15, `${required.length} routes with If-Match`);
  assert.deepEqual(RACES.map((r) => r.name).sort(), required, 'RACES must list exactly the routes of the document that require If-Match');
});

/** Outcomes of every race, printed at the end for docs/reliability.md. */
const outcomes: string[] = [];

for (const race of RACES) {
  test(`${N} concurrent ${race.name} with one If-Match: exactly one wins, the others are refused`, async () => {
    const { read, etag, extra } = await race.setup();
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => race.write(read, etag, i, extra)));
    const statuses = answers.map((r) => r.statusCode);
    const winners = answers.map((r, i) => [r, i] as const).filter(([r]) => r.statusCode === race.winner);
    assert.equal(winners.length, 1, statuses.join(','));
    for (const r of answers) {
      if (r === winners[0]![0]) continue;
      // A loser is told the etag moved; after a delete, the resource may already be gone.
      assert.ok(r.statusCode === 409 || ((race.winner === 204 || race.gone) && r.statusCode === 404), `${r.statusCode} ${r.body}`);
      assert.equal(r.json().errors[0].code, r.statusCode === 409 ? 7030 : 7002, r.body);
    }
    if (race.winner === 204) assert.equal((await call('GET', read)).statusCode, 404);
    await race.verify?.(read, winners[0]![0], winners[0]![1]);
    const losers = new Map<number, number>();
    for (const x of statuses.filter((_, i) => i !== winners[0]![1])) losers.set(x, (losers.get(x) ?? 0) + 1);
    outcomes.push(`race ${race.name}: N=${N}, 1 winner (${race.winner}), losers ${[...losers].map(([st, n]) => `${st}x${n}`).join(' ')}`);
  });
}

test(`Idempotency-Key storms: ${N} retries make one secret version, and one install restore makes one commit on main`, async () => {
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
  outcomes.push(
    `storm POST /v1/secrets/{id}/versions: N=${N}, ${adds.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined).length} made, ${adds.filter((r) => r.headers['idempotent-replayed'] === 'true').length} replayed, ${adds.filter((r) => r.statusCode === 409).length} in flight (409 7031); versions stored: 1`,
  );

  const { inst } = await installOf();
  const first = (await ok('GET', `/v1/installs/${inst.id}/renders`)).data[0];
  await ok('PATCH', `/v1/installs/${inst.id}`, { values: { who: 'b' } }, { 'if-match': inst.etag });
  await h.app.jobs.runDue();
  const etag = (await ok('GET', `/v1/installs/${inst.id}`)).etag;
  const before = commitsOn(inst.id);
  const restores = await Promise.all(
    Array.from({ length: N }, () => call('POST', `/v1/installs/${inst.id}:restore`, { render_id: first.id }, { 'if-match': etag, 'idempotency-key': 'storm-restore' })),
  );
  const fresh = restores.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
  assert.equal(fresh.length, 1, restores.map((r) => r.statusCode).join(','));
  for (const r of restores) {
    if (r.statusCode === 200) assert.deepEqual(r.json(), fresh[0]!.json());
    else assert.deepEqual([r.statusCode, r.json().errors[0].code], [409, 7031], r.body);
  }
  // Retries after the storm replay too, and still make nothing.
  for (let i = 0; i < 3; i++) {
    const again = await call('POST', `/v1/installs/${inst.id}:restore`, { render_id: first.id }, { 'if-match': etag, 'idempotency-key': 'storm-restore' });
    assert.equal(again.headers['idempotent-replayed'], 'true', again.body);
  }
  await h.app.jobs.runDue();
  const after = commitsOn(inst.id);
  assert.equal(after - before, 1, `${N + 3} requests with one Idempotency-Key made ${after - before} commits on main`);
  const commit = fresh[0]!.json().render.commit_sha;
  assert.equal(git(path.join(repoRoot(h.config), `${inst.id}.git`), 'rev-parse', 'refs/heads/main'), commit, 'the one new commit is the restore answered');
  outcomes.push(
    `storm POST /v1/installs/{id}:restore: N=${N} (+3 later retries), 1 made, ${restores.filter((r) => r.headers['idempotent-replayed'] === 'true').length + 3} replayed, ${restores.filter((r) => r.statusCode === 409).length} in flight (409 7031); commits on main: +${after - before}`,
  );
});

test('a token revoked while requests are in flight: no request that started after the revocation committed succeeds', async (t: TestContext) => {
  const created = await ok('POST', '/v1/api_tokens', { name: 'in flight' });
  // The committed marker, read by each lane right before each of its requests: the token's row
  // (a connection of its own on PostgreSQL; on SQLite the one connection, which a transaction
  // holds until it ends). Once a read finds it gone, the revocation has committed, and the
  // request the lane starts next started after the commit: by the order of the lane's own
  // steps, not by a clock, so a loaded machine cannot blur the judgement. Every such request
  // must be refused, whatever the DELETE's answer is doing meanwhile.
  const LANES = 6;
  const AFTER_PER_LANE = 10;
  const log: { lane: number; started: number; ended: number; status: number; afterCommit: boolean }[] = [];
  let stop = false;
  const tokenRowExists = async () => (await h.database.db.selectFrom('api_tokens').select('id').where('id', '=', created.id).executeTakeFirst()) !== undefined;
  const lane = async (lane: number) => {
    while (!stop) {
      const afterCommit = !(await tokenRowExists());
      const started = performance.now();
      const res = await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as(created.token) });
      log.push({ lane, started, ended: performance.now(), status: res.statusCode, afterCommit });
      // In-process requests can complete on microtasks alone: yield, or nothing else ever runs.
      await new Promise((r) => setImmediate(r));
    }
  };
  const lanes = Array.from({ length: LANES }, (_, i) => lane(i));
  const afterOn = (i: number) => log.filter((x) => x.lane === i && x.afterCommit).length;
  let deleteSentAt = Infinity;
  let deleteAnsweredAt = Infinity;
  try {
    await waitFor('60 requests with the token before the DELETE', () => log.length >= 60, { intervalMs: 0 });
    deleteSentAt = performance.now();
    const del = await call('DELETE', `/v1/api_tokens/${created.id}`);
    deleteAnsweredAt = performance.now();
    assert.equal(del.statusCode, 204);
    await waitFor(
      `${AFTER_PER_LANE} requests on each of the ${LANES} lanes after its marker saw the revocation committed`,
      () => Array.from({ length: LANES }, (_, i) => afterOn(i)).every((n) => n >= AFTER_PER_LANE),
      {
        intervalMs: 0,
        detail: () => `per lane: ${Array.from({ length: LANES }, (_, i) => afterOn(i)).join(', ')}`,
      },
    );
  } finally {
    stop = true;
    await Promise.all(lanes);
  }

  for (const x of log) assert.ok(x.status === 200 || x.status === 401, String(x.status));
  for (let i = 0; i < LANES; i++) {
    const seen = log.filter((x) => x.lane === i).map((x) => x.afterCommit);
    assert.ok(
      seen.every((gone, k) => !gone || seen.slice(k).every(Boolean)),
      `lane ${i}: the marker found the revoked token's row again, so it does not read committed state`,
    );
  }
  const before = log.filter((x) => x.ended < deleteSentAt);
  const afterwards = log.filter((x) => x.afterCommit);
  const window = log.filter((x) => x.ended >= deleteSentAt && !x.afterCommit);
  assert.ok(before.length >= 30 && before.every((x) => x.status === 200), 'the token worked before the DELETE was sent');
  assert.ok(afterwards.length >= LANES * AFTER_PER_LANE, `${afterwards.length} requests after`);
  assert.deepEqual([...new Set(afterwards.map((x) => x.status))], [401], 'no request that started after the revocation committed succeeded');
  // And, as the route promises, the very next request after the DELETE's answer is refused too.
  assert.deepEqual([...new Set(log.filter((x) => x.started > deleteAnsweredAt).map((x) => x.status))], [401], 'no request that started after the DELETE answered succeeded');
  const count = (xs: typeof log, st: number) => xs.filter((x) => x.status === st).length;
  const firstSeen = Math.min(...afterwards.map((x) => x.started));
  t.diagnostic(
    `revocation in flight: ${log.length} requests on ${LANES} lanes; before the DELETE ${before.length} (200x${count(before, 200)}); overlapping the DELETE until each lane's marker saw the commit ${window.length} (200x${count(window, 200)} 401x${count(window, 401)}); started after the commit ${afterwards.length} (401x${count(afterwards, 401)}, 200x${count(afterwards, 200)}); first seen committed ${(firstSeen - deleteAnsweredAt).toFixed(1)} ms after the DELETE answered`,
  );
});

test('race figures', (t: TestContext) => {
  for (const line of outcomes) t.diagnostic(line);
  assert.ok(outcomes.length >= RACES.length + 2, `${outcomes.length} outcomes`);
});
