import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, runWsp, adminJsonOf, startServer, WSP_BIN, type ServerProcess } from '../helpers/processes.js';
import { ProviderStub } from '../compute/provider-stub.js';
import { waitFor } from '../helpers/wait.js';
import { client, masterKey } from '../reliability/servers.js';
import { LONG, reportFault } from './report.js';
import { MixTally, soakLane, type SoakWorkspace } from './soak-mix.js';
import { ProcessSampler } from './soak-sampler.js';
import { judge, withLeak, type Limit, type Metric, type Sample } from './soak-stats.js';

/**
 * Issue 22, item 8: a day's load, compressed. A real `wsp serve` takes a steady mix of every
 * route family (test/faults/soak-mix.ts) from LANES lanes, and its resident memory, heap, open
 * descriptors, database connections and event-loop delay are sampled from outside; after the
 * warm-up none may grow (soak-stats.ts: fitted slopes and quarter means under the limits
 * below), and every answer is 2xx or a 4xx the mix provokes on purpose.
 *
 * `npm test`: 30 s, a sample every second. `npm run faults` (LONG): 5 minutes, every 15 s.
 * `npm run soak`: WSP_SOAK_MINUTES (default 60), a sample each minute. WSP_SOAK_LOG_DIR keeps the
 * server's log and the samples there (scripts/soak-report.mjs reads them); WSP_SOAK_HEAP_SNAPSHOTS=1
 * (with it) also takes a heap snapshot of the server just before the warm-up ends and one after
 * the load stops (scripts/heap-diff.mjs compares them: what the heap gained, by constructor).
 */
const MINUTES = Number(process.env.WSP_SOAK_MINUTES ?? 0);
const SHORT = MINUTES === 0 && !LONG;
const DURATION_MS = MINUTES > 0 ? MINUTES * 60_000 : LONG ? 5 * 60_000 : 30_000;
const SAMPLE_MS = MINUTES > 0 ? 60_000 : LONG ? 15_000 : 1_000;
/**
 * The first part of the run is not judged: route schemas compile, the JIT and V8's heap sizing
 * settle, pools fill. It ends once this long has passed AND this many requests were answered
 * (on a loaded machine the first seconds answer few).
 */
const WARMUP = SHORT ? { ms: 10_000, requests: 500 } : { ms: Math.min(10 * 60_000, DURATION_MS / 5), requests: 2_000 };
const LANES = 4;
const UNJUDGED: Limit = { per1000Requests: Infinity, perHour: Infinity, growth: Infinity };
const LOG_DIR = process.env.WSP_SOAK_LOG_DIR;
const SNAPSHOT_DIR = LOG_DIR && process.env.WSP_SOAK_HEAP_SNAPSHOTS === '1' ? path.join(LOG_DIR, `heap-${ENGINE}`) : null;
const LENGTH = DURATION_MS >= 60_000 ? `${DURATION_MS / 60_000} min` : `${DURATION_MS / 1000} s`;

/**
 * The limits, judged over the long runs (`npm run faults`: 5 minutes; `npm run soak`: an hour),
 * per request and (over the hour) per hour. Each is checked against this very run below: the samples with a leak
 * of 1 MB per 100 requests added (1 descriptor, 1 connection per 100 requests) must fail them.
 * The short run of `npm test` (30 s, about 1000 requests on a loaded machine) judges only the
 * database connections: its RSS and descriptor slopes are reported, not judged. In CI, with three
 * other test files on the two cores, leak-free runs showed up to 7.7 MB of RSS and 4.7
 * descriptors per 1000 requests (keep-alive sockets, render workers), as much as the leak the
 * check must catch: that window cannot tell them apart, an hour can. The event loop's delay over
 * 30 s measures the files sharing the cores as much as the server.
 */
/**
 * Slopes per hour are judged over runs of half an hour or more. Over the 4 judged minutes of
 * `npm run faults`, a slope per hour extrapolates the end of the warm-up sixteen-fold (seen: RSS
 * +9 MB in those minutes, 133 MB an hour; the loop's p99 +11 ms, 296 ms an hour, every slope per
 * 1000 requests within its limit): that run judges per request and by growth.
 */
const hourly = (limit: number) => (DURATION_MS >= 30 * 60_000 ? limit : Infinity);
const LIMITS: Record<Metric, Limit> = {
  rssMb: SHORT ? UNJUDGED : { per1000Requests: 0.5, perHour: hourly(30), growth: 40 },
  // The heap is judged by what survives the major collections (wsp_heap_retained_bytes). The heap
  // in use at a sample also holds the garbage awaiting the next one: an hour's samples of one
  // server ranged from 70 to 205 MB while its retained heap stayed near 85, so its slopes measure
  // the collector's pacing more than a leak (reported, not judged). A short run may see no major
  // collection after its warm-up: the retained heap is judged over the long runs only.
  heapMb: UNJUDGED,
  retainedHeapMb: SHORT ? UNJUDGED : { per1000Requests: 0.5, perHour: hourly(20), growth: 30 },
  fds: SHORT ? UNJUDGED : { per1000Requests: 3, perHour: hourly(20), growth: 12 },
  dbConnections: { per1000Requests: 2, perHour: hourly(5), growth: 4 },
  loopP99Ms: SHORT ? UNJUDGED : { per1000Requests: 5, perHour: hourly(100), growth: 150 },
};
const LEAKS: Partial<Record<Metric, number>> = SHORT ? { dbConnections: 0.01 } : { rssMb: 0.01, retainedHeapMb: 0.01, fds: 0.01, dbConnections: 0.01 };

const PROVIDER_TOKEN = 'soak-provider';
let tdb: TestDatabase;
let stub: ProviderStub;
let server: ServerProcess;
let ws: SoakWorkspace;
let applicationName: string;

before(async () => {
  stub = new ProviderStub([PROVIDER_TOKEN]);
  stub.actionPolls = 0;
  // A day's compute calls in minutes would exhaust the provider's hourly budget (its 503 7404 is
  // the provider's refusal, not the server's failure): the stub's budget is a day's and more.
  stub.budget = 1_000_000;
  await stub.start();
  tdb = await openTestDatabase();
  applicationName = `wsp-soak-${randomBytes(4).toString('hex')}`;
  const dbEnv = { ...tdb.env };
  if (dbEnv.DATABASE_URL) {
    const u = new URL(dbEnv.DATABASE_URL);
    u.searchParams.set('application_name', applicationName);
    dbEnv.DATABASE_URL = u.toString();
  }
  const env = {
    ...dbEnv,
    WSP_MASTER_KEY: masterKey(),
    WSP_PROVIDER_URL: stub.url,
    WSP_PROVIDER_TOKEN: PROVIDER_TOKEN,
    WSP_WEBHOOKS_ALLOW_HTTP: 'true',
    WSP_WEBHOOKS_ALLOW_PRIVATE: 'true',
    WSP_RATE_LIMIT_PER_MINUTE: '10000000',
    WSP_AUTH_FAILURES_PER_MINUTE: '100000',
    // Suspensions end within a day and the scan runs every second: their expiry notices are the notifications the mix reads.
    WSP_SUSPENSION_RETENTION_DAYS: '1',
    WSP_SCHEDULER_INTERVAL_SECONDS: '1',
    // A day's renders in an hour: the hourly render quota (600) is not what this run measures.
    WSP_QUOTA_RENDERS_PER_HOUR: '1000000',
  };
  const email = 'owner@soak.example';
  const password = randomBytes(12).toString('hex');
  const boot = adminJsonOf(['bootstrap'], await runWsp(['admin', 'bootstrap', '--email', email, '--password-stdin', '--json'], env, 60_000, password + '\n'));
  const member = await adminJson(['user', 'create', '--name', 'soak member'], env);
  await runWsp(['admin', 'member', 'add', '--workspace', boot.workspace_id!, '--user', member.user_id!, '--role', 'member'], env);
  // The member reviews: approving a change request takes a person who is not its author (the owner).
  const memberSession = await adminJson(['session', 'create', '--user', member.user_id!], env);
  // As users run it: bin/wsp.js's own V8 flags (its shebang line) included.
  const shebangFlags = fs
    .readFileSync(WSP_BIN, 'utf8')
    .split('\n', 1)[0]!
    .replace(/^#!.*?\bnode\b/, '')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  // A snapshot on SIGUSR2 (Node's own flag) into the log directory: taken from outside, as an operator would.
  if (SNAPSHOT_DIR) fs.mkdirSync(SNAPSHOT_DIR, { recursive: true });
  const snapshotFlags = SNAPSHOT_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOT_DIR}`] : [];
  server = await startServer({ ...env, WSP_LOG_LEVEL: 'info' }, [], [...shebangFlags, ...snapshotFlags, WSP_BIN, 'serve']);
  // Route schemas compile after the server listens: that CPU is the start's, not the soak's.
  await waitFor('the route schemas compiled', async () => /^wsp_route_schemas_pending 0$/m.test(await (await fetch(`${server.url}/metrics`)).text()), { intervalMs: 250 });
  const owner = client(boot.session_token!, boot.workspace_id);
  const config = await owner.ok(server.url, 'POST', '/v1/compute/configs', { name: 'soak', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', machine_type_filter: 'cx*' });
  ws = {
    workspaceId: boot.workspace_id!,
    session: boot.session_token!,
    apiToken: boot.api_token!,
    email,
    password,
    memberUserId: member.user_id!,
    memberSession: memberSession.session_token!,
    computeConfigId: config.id,
  };
});
after(async () => {
  await server?.stop();
  await tdb?.cleanup();
  await stub?.stop();
});

/** Asks the server for a heap snapshot and waits until its file is written (its size stops changing). */
async function heapSnapshot(label: string): Promise<void> {
  if (!SNAPSHOT_DIR) return;
  const before = new Set(fs.readdirSync(SNAPSHOT_DIR));
  process.kill(server.child.pid!, 'SIGUSR2');
  let size = -1;
  await waitFor(
    `the ${label} heap snapshot written`,
    () => {
      const file = fs.readdirSync(SNAPSHOT_DIR).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
      if (!file) return false;
      const now = fs.statSync(path.join(SNAPSHOT_DIR, file)).size;
      const done = now > 0 && now === size;
      size = now;
      if (done) fs.renameSync(path.join(SNAPSHOT_DIR, file), path.join(SNAPSHOT_DIR, `${label}.heapsnapshot`));
      return done;
    },
    { intervalMs: 2_000, timeoutMs: 300_000 },
  );
}

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '∞');

test(`soak (${ENGINE}): ${LENGTH} of every route family; memory, descriptors, connections and event-loop delay do not grow`, async (t: TestContext) => {
  const tally = new MixTally();
  const sampler = new ProcessSampler(
    server.child.pid!,
    server.url,
    ENGINE === 'postgres' ? { engine: 'postgres', url: process.env.WSP_TEST_PG_URL!, applicationName } : { engine: 'sqlite', file: path.join(tdb.dataDir, 'wsp.sqlite') },
  );
  await sampler.open();
  const stop = { now: false };
  const started = Date.now();
  const lanes = Array.from({ length: LANES }, (_, i) => soakLane(server.url, ws, i, tally, stop));
  const samples: Sample[] = [];
  let warmedAt: number | null = null;
  try {
    // The measured part lasts DURATION_MS less the warm-up's planned length, however long the warm-up took.
    while (warmedAt === null || Date.now() - warmedAt < DURATION_MS - WARMUP.ms) {
      await sleep(SAMPLE_MS);
      samples.push(await sampler.sample((Date.now() - started) / 1000, tally.all.requests));
      if (!SHORT) console.log(`soak ${ENGINE} sample ${JSON.stringify(samples.at(-1))}`);
      // Two samples before the warm-up ends: the snapshot's pause falls in a sample that is not judged.
      if (SNAPSHOT_DIR && warmedAt === null && samples.length === Math.round(WARMUP.ms / SAMPLE_MS) - 2) await heapSnapshot('warm');
      if (warmedAt === null && Date.now() - started >= WARMUP.ms && tally.all.requests >= WARMUP.requests) warmedAt = Date.now();
    }
  } finally {
    stop.now = true;
    await Promise.all(lanes);
    await sampler.close();
  }
  await heapSnapshot('end');
  const logDir = LOG_DIR;
  if (logDir) {
    // For finding what grows: the server's log (a line per request, with its route and time) and the samples.
    fs.mkdirSync(logDir, { recursive: true });
    fs.writeFileSync(path.join(logDir, `server-${ENGINE}.log`), server.output.join('\n') + '\n');
    fs.writeFileSync(path.join(logDir, `samples-${ENGINE}.json`), JSON.stringify(samples));
  }
  const judged = samples.filter((s) => s.t * 1000 >= warmedAt - started);
  assert.ok(judged.length >= 8, `${judged.length} samples after the warm-up`);

  // Coverage: the routes of the document the mix reached.
  const doc = await client(ws.session).ok(server.url, 'GET', '/v1/openapi.json');
  const routes = Object.entries(doc.paths as Record<string, object>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
  const reached = new Set(tally.byRoute.keys());
  if (reached.has('git clone (info/refs + git-upload-pack)')) {
    reached.add('GET /v1/installs/{id}/repository.git/info/refs');
    reached.add('POST /v1/installs/{id}/repository.git/git-upload-pack');
  }
  const missed = routes.filter((r) => !reached.has(r));

  const verdicts = (Object.keys(LIMITS) as Metric[]).map((m) => judge(judged, m, LIMITS[m]));
  for (const v of verdicts) {
    t.diagnostic(
      `soak ${ENGINE} ${v.metric}: first ${fmt(v.first)} last ${fmt(v.last)} growth ${fmt(v.growth)} (limit ${LIMITS[v.metric].growth}); slope ${fmt(v.per1000Requests, 2)} per 1000 requests (limit ${LIMITS[v.metric].per1000Requests}), ${fmt(v.perHour)} per hour (limit ${fmt(LIMITS[v.metric].perHour, 0)}; least squares ${fmt(v.leastSquaresPerHour)} per hour)`,
    );
  }
  t.diagnostic(
    `soak ${ENGINE}: ${tally.all.requests} requests in ${Math.round((Date.now() - started) / 1000)} s from ${LANES} lanes, ${samples.length} samples (${judged.length} after the warm-up of ${Math.round((warmedAt - started) / 1000)} s and ${judged[0]!.requests} requests), worst latency ${Math.round(tally.all.worstMs)} ms; statuses ${tally.all.summary()}`,
  );
  t.diagnostic(`soak ${ENGINE}: routes reached ${routes.length - missed.length} of ${routes.length}; not reached: ${missed.join(', ')}`);
  const not2xx = [...tally.byRoute].flatMap(([route, per]) => [...per].filter(([st]) => typeof st !== 'number' || st >= 300).map(([st, c]) => `${route} ${st}×${c}`));
  t.diagnostic(`soak ${ENGINE}: answers other than 2xx: ${not2xx.join(', ') || 'none'}`);
  t.diagnostic(
    `soak ${ENGINE}: samples ${JSON.stringify(samples.map((s) => [Math.round(s.t), s.requests, +s.rssMb.toFixed(1), +s.heapMb.toFixed(1), +s.retainedHeapMb.toFixed(1), s.fds, s.dbConnections, +s.loopP99Ms.toFixed(1)]))}`,
  );

  // A 5xx is the server's own failure: its error lines say why.
  for (const line of server.output.filter((l) => /"level":(50|60)/.test(l)).slice(0, 5)) t.diagnostic(`soak ${ENGINE} server error: ${line.slice(0, 1500)}`);
  const kinds = new Map<string, string>();
  for (const u of tally.unexpected) kinds.set(u.slice(0, u.indexOf(' -> ') + 8), u);
  assert.deepEqual([...kinds.values()], [], `answers the mix does not expect (${tally.unexpected.length}; ${tally.all.summary()}), one of each kind`);
  assert.equal(tally.fivexx, 0);
  // The mix must keep reaching nearly every route: a shrinking mix would soak less than it says.
  assert.ok(missed.length <= 12, `the mix missed ${missed.length} routes: ${missed.join(', ')}`);
  for (const v of verdicts) assert.ok(v.ok, `${v.metric} grows: ${JSON.stringify(v)}`);
  // Would this run have caught a leak? The same samples with one added must fail the limits.
  for (const [metric, perRequest] of Object.entries(LEAKS) as [Metric, number][]) {
    const leaky = judge(withLeak(judged, metric, perRequest), metric, LIMITS[metric]);
    assert.ok(
      !leaky.ok,
      `a leak of ${perRequest} ${metric} per request would have passed this run's limits (${judged.at(-1)!.requests - judged[0]!.requests} requests judged): ${JSON.stringify(leaky)}`,
    );
  }

  const rss = verdicts.find((v) => v.metric === 'rssMb')!;
  const fds = verdicts.find((v) => v.metric === 'fds')!;
  const conns = verdicts.find((v) => v.metric === 'dbConnections')!;
  const loop = verdicts.find((v) => v.metric === 'loopP99Ms')!;
  reportFault(t, {
    fault: `soak: ${LENGTH} of mixed load`,
    injected: `${LANES} lanes cycling through ${routes.length - missed.length} of ${routes.length} routes, a sample every ${SAMPLE_MS / 1000} s`,
    requests: tally.all.requests,
    acknowledged: tally.all.acknowledged,
    lost: 0,
    worstLatencyMs: tally.all.worstMs,
    recoveryMs: null,
    notes: `5xx 0; expected 4xx ${tally.expected4xx}; after warm-up: RSS ${fmt(rss.first, 0)}→${fmt(rss.last, 0)} MB (${fmt(rss.per1000Requests, 2)} MB/1000 req, ${fmt(rss.perHour, 0)} MB/h), fds ${fmt(fds.first, 0)}→${fmt(fds.last, 0)}, db connections ${fmt(conns.first, 0)}→${fmt(conns.last, 0)}, loop p99 ${fmt(loop.first, 0)}→${fmt(loop.last, 0)} ms`,
  });
});
