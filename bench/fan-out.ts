/**
 * Fan-out (issue 54, target 2): a new version of a 20-file package reaching the installs that
 * follow it with automatic updates. Packages belong to one workspace (src/installs/packages:
 * every package row and version has its workspace_id, and the job a publish queues,
 * `package.version_published`, moves the installs of that workspace's package only), so "the same
 * package in 50 workspaces" is 50 packages, one per workspace, and the publish is 50 publishes,
 * sent at once. Seeding goes through the API (workspaces, packages, installs whose first render
 * succeeded); the measured part (the publishes, then the installs' renders and commits) through
 * the real servers: two `wsp serve` on one PostgreSQL (as scale-out), one on SQLite (one
 * process per database file: docs/operations.md, "SQLite is one process's").
 *
 * Prints, as rows of the table: installs updated a second and the curve (installs at the new
 * version against time, read from the database every 250 ms), renders of the new version
 * against installs (none lost, none doubled, none failed), the quotas (renders started in the
 * hour against WSP_QUOTA_RENDERS_PER_HOUR, the repositories' bytes against their quotas, and the
 * most renders of one workspace seen `running` at once against WSP_RENDERS_PER_WORKSPACE × the
 * processes), and other tenants' reads: a paced read load on workspaces not involved, its p99
 * quiet (before the publish) and during.
 *
 * Topologies: `serve`, every process a `wsp serve` that runs jobs too (two on PostgreSQL: the
 * issue's "two processes"; one on SQLite); and, on PostgreSQL only, `worker`, the one compose.yaml
 * ships: two `wsp serve --no-worker` take the readers and the publishes, one `wsp worker` runs the
 * jobs (the renders). SQLite has no such setup: its file is one process's (docs/operations.md).
 *
 * The physical reference: beside the platform's readers, the same paced readers against the bench's
 * bare Fastify ceiling (bench/servers/ceiling.mjs, the same bytes), quiet and during the same
 * fan-out, in the same seconds: what the renders' load on the cores does to any server's p99.
 * Each p99 is printed with its sample count and a 95% interval (order statistics, below).
 *
 * BENCH_FANOUT_WORKSPACES and BENCH_FANOUT_INSTALLS scale it down for quick runs (50, 1000);
 * BENCH_FANOUT_READ_EVERY_MS sets the readers' pace (10), BENCH_FANOUT_QUIET_MS their quiet
 * measure (10000); BENCH_FANOUT_TOPOLOGY=serve|worker runs
 * one topology only (both on PostgreSQL by default).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startServer, startWorker, wspCommand, type Proc, type Server } from './lib/processes.js';
import { median } from './lib/load.js';
import type { BenchDb } from './lib/db.js';
import type { Row } from './lib/row.js';
import { bearer, json, must, type Api } from './lib/seed.js';
import type { Credentials } from './scenarios.js';

export const FAN_OUT = 'fan-out';

const FILES = 20;
const WORKSPACES = Number(process.env.BENCH_FANOUT_WORKSPACES ?? 50);
const INSTALLS = Number(process.env.BENCH_FANOUT_INSTALLS ?? 1000);
/** Other tenants reading meanwhile: two workspaces, each read by one paced client. */
const READERS = 2;
/**
 * Each reader sends a request every so many ms (a steady load, not a saturating one). 10, not the
 * 20 of the first rounds, and 10 s quiet, not 5: at 20 ms the quiet p99 was the 5th worst of
 * about 450 answers, and moved by 3× between runs of the same code on a loaded machine.
 */
const READ_EVERY_MS = Number(process.env.BENCH_FANOUT_READ_EVERY_MS ?? 10);
const QUIET_MS = Number(process.env.BENCH_FANOUT_QUIET_MS ?? 10_000);
const READ_PATH = '/v1/api_tokens';
const TIMEOUT_MS = 600_000;
/** The defaults, stated: the quotas checked afterwards are the ones the servers ran with. */
const RENDERS_PER_HOUR = 600;
const RENDERS_PER_WORKSPACE = 2;

/** `serve`: every process serves and runs jobs; `worker`: compose.yaml's servers with --no-worker and one `wsp worker`. */
export type Topology = 'serve' | 'worker';

/** The topologies to run: BENCH_FANOUT_TOPOLOGY, or every one the engine supports. */
export function topologies(engine: 'sqlite' | 'postgres'): Topology[] {
  const only = process.env.BENCH_FANOUT_TOPOLOGY;
  if (only !== undefined && only !== 'serve' && only !== 'worker') throw new Error(`BENCH_FANOUT_TOPOLOGY: serve or worker, not ${only}`);
  if (engine === 'sqlite') {
    if (only === 'worker') throw new Error("BENCH_FANOUT_TOPOLOGY=worker: PostgreSQL only (an SQLite file is one process's: docs/operations.md)");
    return ['serve'];
  }
  return only ? [only] : ['serve', 'worker'];
}

export interface FanOutContext {
  engine: 'sqlite' | 'postgres';
  topology: Topology;
  root: string;
  /** The project's environment (database, master key). */
  env: Record<string, string>;
  creds: Credentials;
  db: BenchDb;
}

function makeApi(servers: Server[]): Api & { on: (i: number) => Api } {
  const on =
    (i: number): Api =>
    async (method, p, headers, body) => {
      const res = await fetch(servers[i % servers.length]!.url + p, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
    };
  let next = 0;
  const api = ((method: string, p: string, headers: Record<string, string>, body?: unknown) => on(next++)(method, p, headers, body)) as Api & { on: (i: number) => Api };
  api.on = on;
  return api;
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T, R>(items: T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (i < items.length) {
        const k = i++;
        out[k] = await fn(items[k]!, k);
      }
    }),
  );
  return out;
}

const files = (version: number) =>
  Object.fromEntries(
    Array.from({ length: FILES }, (_, i) => {
      const n = String(i + 1).padStart(2, '0');
      return [`files/f${n}.yaml`, `name: {{name}}\nindex: ${i + 1}\nversion: ${version}\nreplicas: {{replicas}}\n`];
    }),
  );

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const ordinal = (k: number) => `${k}${k % 100 >= 11 && k % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][k % 10] ?? 'th')}`;

/**
 * A p99 with its sample count and a 95% interval that assumes nothing of the distribution: the
 * sorted samples whose ranks are n·0.99 ± 1.96·√(n·0.99·0.01) (the binomial count of samples
 * under the true p99). At 600 samples the p99 is the 6th worst and the interval runs from the
 * 11th worst to the worst: a p99 of a few hundred samples is a few samples.
 */
function p99Stated(xs: number[]): string {
  const n = xs.length;
  if (n === 0) return 'no samples';
  const s = [...xs].sort((a, b) => a - b);
  const half = 1.96 * Math.sqrt(n * 0.99 * 0.01);
  const at = (rank: number) => s[Math.min(n, Math.max(1, rank)) - 1]!;
  const worst = n - Math.ceil(0.99 * n) + 1;
  return `${n} samples, the p99 the ${worst === 1 ? '' : `${ordinal(worst)} `}worst, about 95% within ${at(Math.floor(0.99 * n - half)).toFixed(1)}-${at(Math.ceil(0.99 * n + half) + 1).toFixed(1)} ms`;
}

const inList = (ids: string[]) => ids.map(() => '?').join(',');

async function count(db: BenchDb, query: string, params: unknown[]): Promise<number> {
  const [row] = await db.all(query, params);
  return Number(Object.values(row ?? { n: 0 })[0] ?? 0);
}

/**
 * CPU seconds a server process has used so far, its threads and the children it waited for (git)
 * included: utime, stime, cutime and cstime of /proc/<pid>/stat, in clock ticks of 10 ms. Less
 * noisy than the wall clock on a shared machine, for comparing two builds.
 */
function cpuSeconds(pid: number): number {
  try {
    const fields = fs
      .readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return [11, 12, 13, 14].reduce((a, i) => a + Number(fields[i]), 0) / 100;
  } catch {
    return NaN;
  }
}

/** Paced readers: each sends one request every READ_EVERY_MS (a late answer delays the next), recording latencies. */
function startReaders(servers: Server[], headers: Record<string, string>[]) {
  let latencies: number[] = [];
  let errors = 0;
  let stopped = false;
  const loops = headers.map(async (h, i) => {
    const url = servers[i % servers.length]!.url + READ_PATH;
    while (!stopped) {
      const start = performance.now();
      try {
        const res = await fetch(url, { headers: h });
        await res.arrayBuffer();
        if (res.status !== 200) errors++;
      } catch {
        errors++;
      }
      const ms = performance.now() - start;
      latencies.push(ms);
      await new Promise((r) => setTimeout(r, Math.max(0, READ_EVERY_MS - ms)));
    }
  });
  return {
    /** The latencies since the last take, and clears them. */
    take() {
      const out = { latencies, errors };
      latencies = [];
      errors = 0;
      return out;
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

export async function fanOut(ctx: FanOutContext): Promise<Row[]> {
  const { engine, topology, db, creds } = ctx;
  const servers: Server[] = [];
  const workers: Proc[] = [];
  /** The processes that run jobs, each with its own share of a workspace's renders. */
  const jobProcesses = topology === 'worker' ? 1 : engine === 'postgres' ? 2 : 1;
  const setup = topology === 'worker' ? '2 `wsp serve --no-worker`, 1 `wsp worker`' : engine === 'postgres' ? '2 processes' : '1 process';
  const env = {
    ...ctx.env,
    // The bench's user owns every workspace of the scenario.
    WSP_WORKSPACES_PER_USER: '1000',
    WSP_QUOTA_RENDERS_PER_HOUR: String(RENDERS_PER_HOUR),
    WSP_RENDERS_PER_WORKSPACE: String(RENDERS_PER_WORKSPACE),
  };
  let ceiling: Server | null = null;
  try {
    // BENCH_PROFILE_DIR: each process writes a V8 CPU profile there when it stops (as the project's in bench/run.ts).
    const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
    const serve = [...profile, ...wspCommand(ctx.root), 'serve', ...(topology === 'worker' ? ['--no-worker'] : [])];
    for (let i = 0; i < (engine === 'postgres' ? 2 : 1); i++) servers.push(await startServer(serve, env, await freePort()));
    if (topology === 'worker') workers.push(await startWorker([...profile, ...wspCommand(ctx.root), 'worker'], env));
    const all: Proc[] = [...servers, ...workers];
    const api = makeApi(servers);
    const session = (ws: string) => ({ ...bearer(creds.session_token), 'service-context': ws, ...json });

    // Seeding: workspaces, a package each, installs whose first render succeeded.
    const t0 = performance.now();
    const wsIds: string[] = await pool(
      Array.from({ length: WORKSPACES + READERS }, (_, i) => i),
      8,
      async (i) => (await must(api('POST', '/v1/workspaces', { ...bearer(creds.session_token), ...json }, { name: `fan-out-${i}` }), 201)).id,
    );
    const workspaces = wsIds.slice(0, WORKSPACES);
    const readerWs = wsIds.slice(WORKSPACES);
    const packages = await pool(workspaces, 8, async (ws) => {
      const pkg = await must(api('POST', '/v1/packages', session(ws), { name: 'fan-out-pkg' }), 201);
      const v1 = await must(api('POST', `/v1/packages/${pkg.id}/versions`, session(ws), { semver: '1.0.0', files: files(1) }), 201);
      return { ws, packageId: pkg.id as string, v1: v1.id as string };
    });
    const installSpecs = Array.from({ length: INSTALLS }, (_, i) => ({ pkg: packages[i % WORKSPACES]!, i }));
    await pool(installSpecs, 16, async ({ pkg, i }) => {
      const body = { name: `fan-out-${i}`, package_id: pkg.packageId, version_id: pkg.v1, values: { name: `fan-out-${i}`, replicas: 1 }, automatic_updates_enabled: true };
      for (;;) {
        const r = await api('POST', '/v1/installs', session(pkg.ws), body);
        if (r.status === 201) return r.json.id as string;
        // A 503 (a lock held by another writer, with Retry-After) is tried again, as clients do.
        if (r.status !== 503) throw new Error(`fan-out seed: POST /v1/installs ${r.status} ${JSON.stringify(r.json)}`);
      }
    });
    const wsList = inList(workspaces);
    for (;;) {
      const n = await count(db, `select count(*) as n from installs where workspace_id in (${wsList}) and current_render_seq >= 1`, workspaces);
      if (n === INSTALLS) break;
      const failed = await count(db, `select count(*) as n from renders where workspace_id in (${wsList}) and state in ('failed', 'superseded')`, workspaces);
      if (failed > 0) throw new Error(`fan-out seed: ${failed} first renders failed`);
      if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`fan-out seed: ${n} of ${INSTALLS} installs rendered after ${TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const seedSeconds = (performance.now() - t0) / 1000;
    console.error(`fan-out (${engine}): seeded ${WORKSPACES} workspaces, ${INSTALLS} installs rendered in ${seedSeconds.toFixed(1)} s`);

    // Other tenants' reads, quiet; and the same readers against the ceiling, answering one reader's bytes.
    const readerHeaders = readerWs.map((ws) => ({ ...bearer(creds.session_token), 'service-context': ws }));
    const sample = await fetch(servers[0]!.url + READ_PATH, { headers: readerHeaders[0]! });
    if (sample.status !== 200) throw new Error(`fan-out: GET ${READ_PATH} ${sample.status}`);
    const bodyFile = path.join(os.tmpdir(), `wsp-bench-fan-out-body-${process.pid}.json`);
    fs.writeFileSync(bodyFile, await sample.text());
    ceiling = await startServer([path.join(ctx.root, 'bench/servers/ceiling.mjs')], { BENCH_ROUTE: READ_PATH, BENCH_METHOD: 'GET', BENCH_STATUS: '200', BENCH_BODY_FILE: bodyFile }, await freePort());
    const readers = startReaders(servers, readerHeaders);
    const reference = startReaders([ceiling], readerHeaders);
    await new Promise((r) => setTimeout(r, 1000));
    readers.take();
    reference.take();
    await new Promise((r) => setTimeout(r, QUIET_MS));
    const quiet = readers.take();
    const quietRef = reference.take();

    // Measured: the publishes, all at once (each workspace's package gets 1.1.0), then the installs updating.
    const cpu0 = all.map((s) => cpuSeconds(s.pid));
    const start = performance.now();
    const v2s: string[] = await Promise.all(
      packages.map(async (p, i) => (await must(api.on(i)('POST', `/v1/packages/${p.packageId}/versions`, session(p.ws), { semver: '1.1.0', files: files(2) }), 201)).id),
    );
    const published = performance.now() - start;
    const v2List = inList(v2s);
    const curve: { t: number; n: number }[] = [];
    let maxRunning = 0;
    // When every workspace had at least one install at the new version: what the render pool's
    // order across workspaces decides (first-in first-out, the last publisher's waited for the rest).
    let everyWorkspaceAt = NaN;
    for (;;) {
      const n = await count(db, `select count(*) as n from installs where current_version_id in (${v2List})`, v2s);
      const t = (performance.now() - start) / 1000;
      curve.push({ t, n });
      if (Number.isNaN(everyWorkspaceAt) && (await count(db, `select count(distinct workspace_id) as n from installs where current_version_id in (${v2List})`, v2s)) === WORKSPACES)
        everyWorkspaceAt = t;
      const [busiest] = await db.all(`select count(*) as n from renders where package_version_id in (${v2List}) and state = 'running' group by workspace_id order by n desc limit 1`, v2s);
      maxRunning = Math.max(maxRunning, Number(busiest?.n ?? 0));
      if (n === INSTALLS) break;
      const bad = await count(db, `select count(*) as n from renders where package_version_id in (${v2List}) and state in ('failed', 'superseded')`, v2s);
      if (bad > 0) throw new Error(`fan-out: ${bad} renders of the new version failed or were superseded`);
      if (t * 1000 > TIMEOUT_MS) throw new Error(`fan-out: ${n} of ${INSTALLS} installs at the new version after ${TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const totalSeconds = (performance.now() - start) / 1000;
    const cpu = all.reduce((a, s, i) => a + cpuSeconds(s.pid) - cpu0[i]!, 0);
    const during = readers.take();
    const duringRef = reference.take();
    await Promise.all([readers.stop(), reference.stop()]);

    // Afterwards: one succeeded render of the new version per install, and the quotas.
    const perInstall = await db.all(
      `select install_id, count(*) as n, sum(case when state = 'succeeded' then 1 else 0 end) as ok from renders where package_version_id in (${v2List}) group by install_id`,
      v2s,
    );
    const rendered = perInstall.reduce((a, r) => a + Number(r.n), 0);
    const lost = INSTALLS - perInstall.filter((r) => Number(r.ok) >= 1).length;
    const doubled = perInstall.filter((r) => Number(r.n) > 1).length;
    const commits = await count(db, `select count(distinct commit_sha) as n from renders where package_version_id in (${v2List}) and state = 'succeeded'`, v2s);
    const hourly = await db.all(`select workspace_id, count(*) as n from renders where workspace_id in (${wsList}) group by workspace_id order by n desc limit 1`, workspaces);
    const bytes = await db.all(
      `select max(repository_bytes) as one, sum(repository_bytes) as total from installs where workspace_id in (${wsList}) group by workspace_id order by total desc limit 1`,
      workspaces,
    );
    const maxHourly = Number(hourly[0]?.n ?? 0);
    const maxRepo = Number(bytes[0]?.one ?? 0);
    const maxWsBytes = Number(bytes[0]?.total ?? 0);

    // The curve, about every second (the last point is the end).
    const points: string[] = [];
    let nextT = 1;
    for (const p of curve) {
      if (p.t >= nextT || p === curve[curve.length - 1]) {
        points.push(`${p.t.toFixed(1)} s: ${p.n}`);
        nextT = Math.floor(p.t) + 1;
      }
    }
    const reached = (k: number) => curve.find((p) => p.n >= k)?.t ?? NaN;
    console.error(`fan-out (${engine}, ${setup}) curve: ${points.join(', ')}`);

    const name = `${FAN_OUT}: ${INSTALLS} installs of a ${FILES}-file package in ${WORKSPACES} workspaces reach a new version, installs/s (${setup})`;
    // The readers' rows of the `serve` topology keep their names (the issue's figure); the others say theirs.
    const of = topology === 'serve' ? '' : ` (${setup})`;
    const qp99 = percentile(quiet.latencies, 99);
    const dp99 = percentile(during.latencies, 99);
    const qRef = percentile(quietRef.latencies, 99);
    const dRef = percentile(duringRef.latencies, 99);
    const base = { engine, variant: 'project' as const };
    const ref = { engine, variant: 'ceiling' as const, rssMb: NaN };
    return [
      {
        ...base,
        scenario: name,
        rps: INSTALLS / totalSeconds,
        // p50 and p99: when half and 99% of the installs had reached it, from the publishes' start.
        p50: reached(INSTALLS / 2) * 1000,
        p99: reached(Math.ceil(INSTALLS * 0.99)) * 1000,
        rssMb: Math.max(...all.map((s) => s.peakRssMb())),
        errors: lost + doubled,
        note:
          `all in ${totalSeconds.toFixed(1)} s (target ${engine === 'sqlite' ? 20 : 30} s; the ${WORKSPACES} publishes answered in ${(published / 1000).toFixed(2)} s); ` +
          `every workspace had an install at the new version by ${everyWorkspaceAt.toFixed(1)} s; ` +
          `p50/p99: when half / 99% were there; renders of the new version ${rendered} for ${INSTALLS} installs (${lost} lost, ${doubled} doubled), ${commits} commits; ${topology === 'worker' ? "servers' and worker's" : "servers'"} CPU ${((cpu * 1000) / INSTALLS).toFixed(1)} ms an install; ` +
          `quotas: at most ${maxHourly} renders of a workspace in the hour (quota ${RENDERS_PER_HOUR}), at most ${maxRunning} renders of one workspace running at once (in the database: waiting for a thread counts; WSP_RENDERS_PER_WORKSPACE ${RENDERS_PER_WORKSPACE} a process × ${jobProcesses}), ` +
          `largest repository ${maxRepo} B, largest workspace's repositories ${maxWsBytes} B; curve: ${points.join(', ')}`,
      },
      {
        ...base,
        scenario: `${FAN_OUT}: other tenants' reads (GET /v1/api_tokens, ${READERS} workspaces, one paced client each, every ${READ_EVERY_MS} ms)${of}, quiet`,
        rps: quiet.latencies.length / (QUIET_MS / 1000),
        p50: median(quiet.latencies),
        p99: qp99,
        rssMb: NaN,
        errors: quiet.errors,
        note: p99Stated(quiet.latencies),
      },
      {
        ...base,
        scenario: `${FAN_OUT}: the same reads during the fan-out${of}`,
        rps: during.latencies.length / totalSeconds,
        p50: median(during.latencies),
        p99: dp99,
        rssMb: NaN,
        errors: during.errors,
        note: `readers' p99 ${(dp99 / qp99).toFixed(2)}× quiet (target ≤ 2); the ceiling's beside: ${(dRef / qRef).toFixed(2)}×; ${(dp99 / dRef).toFixed(2)}× the ceiling's p99 in the same seconds (quiet: ${(qp99 / qRef).toFixed(2)}×); ${p99Stated(during.latencies)}`,
      },
      {
        ...ref,
        scenario: `${FAN_OUT}: the same readers against the ceiling (bare Fastify, the same bytes), in the same seconds${of}, quiet`,
        rps: quietRef.latencies.length / (QUIET_MS / 1000),
        p50: median(quietRef.latencies),
        p99: qRef,
        errors: quietRef.errors,
        note: p99Stated(quietRef.latencies),
      },
      {
        ...ref,
        scenario: `${FAN_OUT}: the ceiling's readers during the fan-out${of}`,
        rps: duringRef.latencies.length / totalSeconds,
        p50: median(duringRef.latencies),
        p99: dRef,
        errors: duringRef.errors,
        note: `p99 ${(dRef / qRef).toFixed(2)}× quiet: the renders' load on the cores alone; ${p99Stated(duringRef.latencies)}`,
      },
    ];
  } finally {
    await ceiling?.stop();
    for (const s of [...servers, ...workers]) await s.stop();
  }
}
