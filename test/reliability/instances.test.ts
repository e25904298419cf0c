import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { ProviderStub } from '../compute/provider-stub.js';
import { checkRepository, client, masterKey, repositories } from './servers.js';
import { waitFor } from '../helpers/wait.js';
import { jobsSucceededSince } from '../helpers/jobs.js';

/**
 * Issue 9.5: several `wsp serve` processes (each with its job worker) on one PostgreSQL behave
 * exactly as one: Idempotency-Key storms spread over them make one write, each job runs once,
 * the compute scheduler sends each machine_expiry notice once, and a revocation on one is seen
 * by the others on the very next request. SQLite is one process by design: the same assertions
 * run against one process there (test/cli/two-servers covers tokens and If-Match across two).
 */
const COUNT = ENGINE === 'postgres' ? 3 : 1;
const PLATFORM_TOKEN = 'platform-token';

let tdb: TestDatabase;
let stub: ProviderStub;
const servers: ServerProcess[] = [];
let ws: string;
let owner: ReturnType<typeof client>;
let people: { owner: string; admin: string; member: string };
/** Every credential used, for the scan of the servers' logs. */
const credentials: string[] = [];

before(async () => {
  stub = new ProviderStub([PLATFORM_TOKEN]);
  stub.actionPolls = 0;
  await stub.start();
  tdb = await openTestDatabase();
  const admin = createAdminService(tdb.database.db, systemClock);
  const boot = await admin.bootstrap();
  ws = boot.workspace_id;
  const adm = (await admin.createUser({ name: 'admin' })).user_id;
  const mem = (await admin.createUser({ name: 'member' })).user_id;
  await admin.addMember(ws, adm, 'admin');
  await admin.addMember(ws, mem, 'member');
  people = {
    owner: boot.session_token,
    admin: (await admin.createSession(adm)).session_token,
    member: (await admin.createSession(mem)).session_token,
  };
  owner = client(boot.session_token, ws);
  credentials.push(boot.session_token, boot.api_token, ...Object.values(people), PLATFORM_TOKEN);
  const env = {
    ...tdb.env,
    WSP_MASTER_KEY: masterKey(),
    WSP_PROVIDER_URL: stub.url,
    WSP_PROVIDER_TOKEN: PLATFORM_TOKEN,
    // Scans every second, and a retention of one day: the first scan is already within the warning.
    WSP_SCHEDULER_INTERVAL_SECONDS: '1',
    WSP_SUSPENSION_RETENTION_DAYS: '1',
    // The revocation test sends many requests that fail authentication on purpose.
    WSP_AUTH_FAILURES_PER_MINUTE: '100000',
  };
  // Every server that did start is stopped in after(), even when another failed to.
  const started = await Promise.allSettled(Array.from({ length: COUNT }, () => startServer(env)));
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await tdb.cleanup();
  await stub.stop();
});

/** The i-th request's server, round robin. */
const at = (i: number) => servers[i % servers.length]!.url;

test(`${COUNT} process${COUNT > 1 ? 'es' : ''}: Idempotency-Key storms spread over them make exactly one write`, async (t: TestContext) => {
  const secret = await owner.ok(at(0), 'POST', '/v1/secrets', { name: 'storm' });
  const adds = await Promise.all(Array.from({ length: 12 }, (_, i) => owner.call(at(i), 'POST', `/v1/secrets/${secret.id}/versions`, { data: 'c3Rvcm0=' }, { 'idempotency-key': 'multi-version' })));
  const created = adds.filter((r) => r.status === 201);
  assert.equal(created.filter((r) => r.headers.get('idempotent-replayed') === null).length, 1, adds.map((r) => r.status).join(','));
  for (const r of adds) {
    if (r.status === 201) assert.deepEqual(r.body, created[0]!.body);
    else assert.deepEqual([r.status, r.body.errors[0].code], [409, 7031], r.text);
  }
  assert.equal((await owner.all(at(1), `/v1/secrets/${secret.id}/versions`)).length, 1);

  const pkg = await owner.ok(at(0), 'POST', '/v1/packages', { name: 'multi' });
  const v = await owner.ok(at(0), 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': '{{who}}' } });
  const made = await owner.ok(at(0), 'POST', '/v1/installs', { name: 'multi', package_id: pkg.id, version_id: v.id, values: { who: 'a' } });
  // The first render's success moves the etag (current_version): the storm starts from the etag after it.
  const inst = await waitFor('the first render', async () => {
    const now = await owner.ok(at(0), 'GET', `/v1/installs/${made.id}`);
    return now.current_version ? now : null;
  });
  const patches = await Promise.all(
    Array.from({ length: 12 }, (_, i) => owner.call(at(i), 'PATCH', `/v1/installs/${inst.id}`, { values: { who: 'b' } }, { 'if-match': inst.etag, 'idempotency-key': 'multi-patch' })),
  );
  const fresh = patches.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null);
  assert.equal(fresh.length, 1, patches.map((r) => r.status).join(','));
  for (const r of patches) {
    if (r.status === 200) assert.deepEqual(r.body, fresh[0]!.body);
    else assert.deepEqual([r.status, r.body.errors[0].code], [409, 7031], r.text);
  }
  assert.equal((await owner.all(at(2), `/v1/installs/${inst.id}/renders`)).length, 2, 'one render for the one PATCH');
  const tally = (rs: { status: number; headers: Headers }[]) =>
    `${rs.filter((r) => r.status < 300 && r.headers.get('idempotent-replayed') === null).length} made, ${rs.filter((r) => r.headers.get('idempotent-replayed') === 'true').length} replayed, ${rs.filter((r) => r.status === 409).length} in flight (409)`;
  t.diagnostic(`instances ${ENGINE}: ${servers.length} wsp serve process(es) on one database`);
  t.diagnostic(`instances idempotency: 12 secret version adds over ${servers.length} process(es): ${tally(adds)}; 12 install PATCHes: ${tally(patches)}`);
});

test('jobs run once: renders queued through every process each commit once, in order, and finish', async (t: TestContext) => {
  const pkg = await owner.ok(at(0), 'POST', '/v1/packages', { name: 'jobs' });
  const v = await owner.ok(at(0), 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': '{{who}}' } });
  const installs = await Promise.all(
    Array.from({ length: 4 }, (_, i) => owner.ok(at(i), 'POST', '/v1/installs', { name: `jobs-${i}`, package_id: pkg.id, version_id: v.id, values: { who: 'start' } })),
  );
  // Each install PATCHed five times in a row, the installs in parallel, the requests round robin.
  await Promise.all(
    installs.map(async (inst, i) => {
      for (let n = 0; n < 5; n++) await owner.ok(at(i + n), 'PATCH', `/v1/installs/${inst.id}`, { values: { who: `v${n}` } }, { 'if-match': '*' });
    }),
  );
  for (const inst of installs) {
    const renders = await waitFor(`the renders of ${inst.id}`, async () => {
      const all = await owner.all(at(0), `/v1/installs/${inst.id}/renders`);
      return all.every((r: { state: string }) => r.state === 'succeeded' || r.state === 'superseded') ? all : null;
    });
    assert.equal(renders.length, 6);
    assert.equal(renders[0].state, 'succeeded');
    const repo = repositories(tdb.dataDir).find((r) => r.endsWith(`${inst.id}.git`))!;
    checkRepository(repo, renders);
    assert.equal((await owner.ok(at(1), 'GET', `/v1/installs/${inst.id}`)).values.who, 'v4');
  }
  // A job's outcome is committed just after its render's, in the runner's own transaction.
  const jobs = await waitFor('the render jobs to finish', async () => {
    const rows = await tdb.database.db.selectFrom('jobs').select(['id', 'kind', 'state', 'attempts', 'locked_by']).where('kind', 'like', 'render.%').execute();
    return rows.every((j) => j.state !== 'queued' && j.state !== 'running') ? rows : null;
  });
  assert.ok(jobs.length >= installs.length * 6 - 4, `${jobs.length} render jobs`);
  for (const j of jobs) assert.deepEqual([j.state, j.attempts], ['succeeded', 1], `job ${j.id} ran once`);
  t.diagnostic(
    `instances jobs: ${jobs.length} render jobs queued through ${servers.length} process(es), all succeeded with 1 attempt each (${jobs.reduce((n, j) => n + j.attempts, 0)} attempts in all); 4 repositories, each commit on main one render's`,
  );
});

test('the compute scheduler of every process sends each machine_expiry notice once, to owners and admins only', async (t: TestContext) => {
  const cc = await owner.ok(at(0), 'POST', '/v1/compute/configs', { name: 'expiry', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04' });
  const created = await owner.ok(at(1), 'POST', '/v1/machines', { compute_config_id: cc.id, server_type: 'cx22' });
  const running = await waitFor('the machine to run', async () => {
    const m = await owner.ok(at(2), 'GET', `/v1/machines/${created.id}`);
    assert.notEqual(m.status, 'failed', JSON.stringify(m));
    return m.status === 'running' ? m : null;
  });
  await owner.ok(at(0), 'POST', `/v1/machines/${created.id}:suspend`, {}, { 'if-match': running.etag });
  await waitFor('the machine to be suspended', async () => (await owner.ok(at(1), 'GET', `/v1/machines/${created.id}`)).status === 'suspended');

  const notices = async (session: string) =>
    (await client(session).all(at(0), '/v1/notifications')).filter((n: { type: string; resource_id: string }) => n.type === 'machine_expiry' && n.resource_id === created.id);
  await waitFor('the notices', async () => (await notices(people.owner)).length > 0 && (await notices(people.admin)).length > 0);
  // More scans after the notices, so "exactly one" is seen after scans that could have sent more.
  await jobsSucceededSince(tdb.database, 'compute.expiry_scan', Date.now(), 3, 'the notices were sent');
  for (const who of ['owner', 'admin'] as const) {
    const got = await notices(people[who]);
    assert.equal(got.length, 1, `${who}: ${JSON.stringify(got)}`);
    assert.equal(got[0].severity, 'warning', 'both thresholds had passed at the first scan: only the warning');
  }
  assert.deepEqual(await notices(people.member), [], 'members get none');
  const scans = await tdb.database.db.selectFrom('jobs').select(['dedupe_key']).where('kind', '=', 'compute.expiry_scan').execute();
  assert.ok(scans.length >= 4, `${scans.length} scans ran`);
  assert.equal(new Set(scans.map((s) => s.dedupe_key)).size, scans.length, 'one scan per period');
  t.diagnostic(`instances notices: ${scans.length} expiry scans (one per period) by ${servers.length} scheduler(s); machine_expiry notices: owner 1, admin 1, member 0`);
});

test('a token revoked on one process: no request to any process that started after the revocation committed succeeds', async (t: TestContext) => {
  const created = await owner.ok(at(0), 'POST', '/v1/api_tokens', { name: 'roaming' });
  credentials.push(created.token);
  const withToken = client(created.token);
  const log: { started: number; ended: number; status: number; server: number }[] = [];
  let stop = false;
  const lane = async (i: number) => {
    while (!stop) {
      const started = performance.now();
      const res = await withToken.call(at(i), 'GET', '/v1/secrets');
      log.push({ started, ended: performance.now(), status: res.status, server: i % servers.length });
    }
  };
  // The committed marker: this test's own connection to the database polls for the token's row;
  // the first time it is gone, the revocation has committed (a reader sees only committed rows).
  let committedAt = Infinity;
  const marker = (async () => {
    while (!stop && committedAt === Infinity) {
      const row = await tdb.database.db.selectFrom('api_tokens').select('id').where('id', '=', created.id).executeTakeFirst();
      if (!row) committedAt = performance.now();
      else await sleep(1);
    }
  })();
  const lanes = Array.from({ length: 2 * COUNT }, (_, i) => lane(i));
  await waitFor('the stream', async () => log.length >= 30, { timeoutMs: 10_000, intervalMs: 5 });
  const deleteSentAt = performance.now();
  const del = await owner.call(at(0), 'DELETE', `/v1/api_tokens/${created.id}`);
  assert.equal(del.status, 204);
  // Every process asked after the commit, not only 40 requests: one process's lanes can answer
  // forty 401s while another's request in flight is held up (a pause of its own under CI's load).
  const askedAfter = () => log.filter((x) => x.started > committedAt);
  await waitFor(
    'the stream after the revocation, on every process',
    async () => committedAt < Infinity && askedAfter().length >= 40 && new Set(askedAfter().map((x) => x.server)).size === servers.length,
    { timeoutMs: 10_000, intervalMs: 5 },
  );
  stop = true;
  await Promise.all([...lanes, marker]);
  const before = log.filter((x) => x.ended < deleteSentAt);
  const window = log.filter((x) => x.ended >= deleteSentAt && x.started <= committedAt);
  const afterwards = askedAfter();
  assert.ok(before.length >= 20 && before.every((x) => x.status === 200), 'the token worked before the DELETE was sent');
  assert.equal(new Set(afterwards.map((x) => x.server)).size, servers.length, 'every process was asked after the revocation');
  assert.deepEqual([...new Set(afterwards.map((x) => x.status))], [401], 'no request that started after the revocation committed succeeded');
  for (const x of window) assert.ok(x.status === 200 || x.status === 401, String(x.status));
  t.diagnostic(
    `instances revocation: ${log.length} requests over ${servers.length} process(es); before the DELETE ${before.length} (all 200); overlapping it until the commit ${window.length} (200x${window.filter((x) => x.status === 200).length} 401x${window.filter((x) => x.status === 401).length}); started after the commit ${afterwards.length} (all 401)`,
  );
});

test('no credential in any line any of the processes wrote', () => {
  const lines = servers.flatMap((s) => s.output);
  assert.ok(lines.length > 50, `${lines.length} lines`);
  assert.deepEqual(
    lines.filter((l) => credentials.some((c) => l.includes(c))),
    [],
  );
});
