/**
 * `npm run bench`: each scenario through the full stack, against the framework's ceiling (a
 * minimal Fastify app answering the same bytes from memory) and the floor of the work (the same
 * SQL by hand), in one run on one machine, repeated and interleaved; prints one table. On
 * PostgreSQL the cached authenticated reads have a fourth row, the reference: the ceiling plus
 * the read's one batched statement by hand (bench/servers/ceiling-statement.mjs).
 *   --engine sqlite|postgres|both   (default both)   --duration S (3)   --repeat N (3)
 *   --connections C (32)            --only TEXT      --client wrk|autocannon (wrk when installed)
 *   BENCH_PROFILE_DIR=DIR: the project's server writes a V8 CPU profile into DIR when it stops.
 * Besides the request scenarios (bench/scenarios.ts): the install workloads (restore storm,
 * renders a second: bench/install-workloads.ts; renders at 16 installs with /healthz probed, and
 * git's own rate for the same tree: bench/renders.ts), the event-loop delay under the api_tokens read,
 * scale-out (PostgreSQL), the fan-out of a new package version to 1,000 installs (bench/fan-out.ts),
 * a workspace grown to 10^6 events against an empty one (bench/growth.ts)
 * and `wsp serve`'s ready time.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, startServer, timeToReady, wspCommand, type Server } from './lib/processes.js';
import { describeClient, load, maxFinite, median, selectClient, uniqueValue, type LoadResult } from './lib/load.js';
import { scenarios, type Api, type Credentials, type Request } from './scenarios.js';
import { installWorkloads } from './install-workloads.js';
import { growth } from './growth.js';
import { renderWorkloads } from './renders.js';
import { openBenchDb } from './lib/db.js';
import { FAN_OUT, fanOut, topologies } from './fan-out.js';
import type { Row } from './lib/row.js';
import { LoopDelay, loopProbe } from './event-loop.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { values: opts } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    duration: { type: 'string', default: '3' },
    repeat: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    client: { type: 'string' },
  },
});
selectClient(opts.client);
const duration = Number(opts.duration);
const repeat = Number(opts.repeat);
const connections = Number(opts.connections);

/** Whether --only selects a scenario or workload known by any of these names. */
const selected = (...names: string[]) => !opts.only || names.some((n) => n.includes(opts.only!));

async function withPostgres<T>(fn: (url: string) => Promise<T>): Promise<T> {
  if (process.env.WSP_BENCH_PG_URL) return fn(process.env.WSP_BENCH_PG_URL);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-bench-pg-'));
  const port = String(await freePort());
  const url = execFileSync('bash', [path.join(root, 'scripts/pg-throwaway.sh'), 'start', port, dir], { encoding: 'utf8' }).trim();
  try {
    return await fn(url);
  } finally {
    execFileSync('bash', [path.join(root, 'scripts/pg-throwaway.sh'), 'stop', dir]);
  }
}

function makeApi(base: string): Api {
  return async (method, p, headers, body) => {
    const res = await fetch(base + p, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
  };
}

async function runVariant(server: Server, req: Request, seconds = duration): Promise<LoadResult> {
  return load({
    url: server.url + req.path,
    method: req.method,
    headers: req.headers,
    ...(req.body !== undefined ? { body: req.body } : {}),
    ...(req.uniqueHeaders ? { uniqueHeaders: req.uniqueHeaders } : {}),
    connections: req.connections ?? connections,
    durationSeconds: seconds,
    expectStatus: req.expectStatus,
  });
}

/** One request as the load will send it, its status checked: the answer's bytes (the ceiling's body). */
async function sample(server: Server, name: string, req: Request): Promise<string> {
  const unique = Object.fromEntries((req.uniqueHeaders ?? []).map((h) => [h, uniqueValue()]));
  const res = await fetch(server.url + req.path, { method: req.method, headers: { ...req.headers, ...unique }, ...(req.body !== undefined ? { body: req.body } : {}) });
  const bytes = await res.text();
  if (res.status !== req.expectStatus) throw new Error(`${name}: expected ${req.expectStatus}, got ${res.status} ${bytes}`);
  return bytes;
}

/**
 * Waits until the server has compiled every route schema (it does once it listens, between
 * requests: a second or two of CPU). A start-up cost, measured as such by the ready time; left
 * to run into the first scenario, it was charged to that scenario's requests.
 */
async function schemasCompiled(server: Server): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const text = await (await fetch(server.url + '/metrics')).text();
    if (/^wsp_route_schemas_pending 0$/m.test(text)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the route schemas were still compiling after 30 s');
}

/**
 * The reads whose physical reference on PostgreSQL is the ceiling plus their one statement
 * (bench/servers/ceiling-statement.mjs), by their floor's name: what a cached authenticated read
 * cannot go below there, the round trip that revocation on the next request needs.
 */
const STATEMENT_REFERENCE = new Set(['api_tokens', 'notifications', 'revisions']);

/** Not measured: JIT, caches and the project's lazily compiled schemas settle first, on every side alike. */
const WARM_UP_SECONDS = 1;

async function benchEngine(engine: 'sqlite' | 'postgres', dbEnv: Record<string, string>): Promise<Row[]> {
  const rows: Row[] = [];
  const creds = JSON.parse(execFileSync(process.execPath, [path.join(root, 'bin/wsp.js'), 'admin', 'bootstrap', '--json'], { env: { ...process.env, ...dbEnv }, encoding: 'utf8' })) as Credentials;
  // The 401 scenario measures rejecting a credential, not the limiter that follows many of them;
  // the renders workload measures renders, not the hourly render quota (600 by default), which
  // a few of its runs reach (it still counts the hour's renders on each PATCH, as ever).
  const projectEnv = { ...dbEnv, WSP_LOG_LEVEL: 'info', WSP_AUTH_FAILURES_PER_MINUTE: '100000000', WSP_QUOTA_RENDERS_PER_HOUR: '100000000' };
  const benchDb = openBenchDb(dbEnv);
  // BENCH_PROFILE_DIR: the project's server writes a V8 CPU profile there when it stops (for where the time goes).
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  // The event-loop probe (bench/event-loop.ts) rides in the project's server from its start.
  const probe = loopProbe();
  const project = await startServer([...profile, ...probe.args, ...wspCommand(root), 'serve'], { ...projectEnv, ...probe.env }, await freePort());
  await schemasCompiled(project);
  const api = makeApi(project.url);
  try {
    for (const sc of scenarios.filter((s) => selected(s.name, ...(s.eventLoop ? [s.eventLoop] : [])))) {
      const req = await sc.seed(api, creds, benchDb);
      const bytes = await sample(project, sc.name, req);
      if (req.baseline) await sample(project, `${sc.name} (${req.baseline.name})`, req.baseline.request);
      const bodyFile = path.join(os.tmpdir(), `wsp-bench-body-${process.pid}.json`);
      fs.writeFileSync(bodyFile, bytes);
      const common = { BENCH_ROUTE: req.route, BENCH_METHOD: req.method, BENCH_STATUS: String(req.expectStatus), BENCH_BODY_FILE: bodyFile, BENCH_SCENARIO: sc.floor ?? '' };
      const ceiling = sc.projectOnly ? null : await startServer([path.join(root, 'bench/servers/ceiling.mjs')], common, await freePort());
      const floor = sc.floor && !sc.projectOnly ? await startServer([path.join(root, 'bench/servers/floor.mjs')], { ...common, ...dbEnv }, await freePort()) : null;
      const reference =
        engine === 'postgres' && sc.floor && !sc.projectOnly && STATEMENT_REFERENCE.has(sc.floor)
          ? await startServer([path.join(root, 'bench/servers/ceiling-statement.mjs')], { ...common, ...dbEnv }, await freePort())
          : null;
      const results: Record<Row['variant'], LoadResult[]> = { project: [], ceiling: [], floor: [], reference: [] };
      // The baseline request, on the project and on the floor (each against its own 200).
      const baseline: Record<'project' | 'floor', LoadResult[]> = { project: [], floor: [] };
      const loop = sc.eventLoop ? new LoopDelay(project, probe.file) : null;
      for (const server of [project, ceiling, floor, reference]) if (server) await runVariant(server, req, WARM_UP_SECONDS);
      if (req.baseline) for (const server of [project, floor]) if (server) await runVariant(server, req.baseline.request, WARM_UP_SECONDS);
      await req.settle?.();
      // The event loop idle, for the rows' notes: one second between two readings.
      await loop?.measureIdle();
      for (let i = 0; i < repeat; i++) {
        await loop?.start();
        results.project.push(await runVariant(project, req));
        await loop?.stop();
        await req.settle?.();
        if (req.baseline) baseline.project.push(await runVariant(project, req.baseline.request));
        if (ceiling) results.ceiling.push(await runVariant(ceiling, req));
        if (reference) results.reference.push(await runVariant(reference, req));
        if (floor) results.floor.push(await runVariant(floor, req));
        if (floor && req.baseline) baseline.floor.push(await runVariant(floor, req.baseline.request));
      }
      const servers: Record<Row['variant'], Server | null> = { project, ceiling, floor, reference };
      for (const variant of ['project', 'ceiling', 'floor', 'reference'] as const) {
        const rs = results[variant];
        if (rs.length === 0) continue;
        const rps = median(rs.map((r) => r.rps));
        let note: string | undefined;
        if (variant === 'project' && reference) note = `${(rps / median(results.reference.map((r) => r.rps))).toFixed(2)}× the ceiling plus its statement (reference)`;
        if (variant !== 'ceiling' && variant !== 'reference' && req.baseline) {
          const of = baseline[variant];
          const base = median(of.map((r) => r.rps));
          note = `${(rps / base).toFixed(2)}× the req/s of its own ${req.baseline.name} (${base.toFixed(0)} req/s, p99 ${median(of.map((r) => r.p99)).toFixed(1)} ms, measured alternately; ${req.baseline.target}; its errors ${of.reduce((a, r) => a + r.errors + r.non2xx, 0)})`;
        }
        rows.push({
          scenario: sc.name,
          engine,
          variant,
          rps,
          p50: median(rs.map((r) => r.p50)),
          p99: median(rs.map((r) => r.p99)),
          rssMb: servers[variant]!.peakRssMb(),
          errors: rs.reduce((a, r) => a + r.errors + r.non2xx, 0),
          ...(note ? { note } : {}),
        });
      }
      if (loop && sc.eventLoop) rows.push(...loop.rows(engine, sc.eventLoop, median));
      await ceiling?.stop();
      await floor?.stop();
      await reference?.stop();
      fs.rmSync(bodyFile, { force: true });
    }
    for (const w of [...installWorkloads, ...renderWorkloads].filter((w) => selected(w.name))) {
      rows.push(...(await w.run({ engine, project, api, creds, durationSeconds: duration, repeat, warmUpSeconds: WARM_UP_SECONDS })));
    }
    if (engine === 'postgres' && selected('scale-out')) rows.push(...(await scaleOut(project, api, creds, benchDb, projectEnv)));
  } finally {
    await project.stop();
    await benchDb.close();
  }
  // Its own servers (two on PostgreSQL, both with and without a `wsp worker`; on SQLite the
  // database file is one process's): after the project's stopped.
  if (selected(FAN_OUT)) {
    const db = openBenchDb(dbEnv);
    try {
      for (const topology of topologies(engine)) rows.push(...(await fanOut({ engine, topology, root, env: projectEnv, creds, db })));
    } finally {
      await db.close();
    }
  }
  // Its own database and server (bench/growth.ts): 10^6 events would change every other scenario.
  if (selected('growth')) rows.push(...(await growth({ root, engine, dbEnv, repeat })));
  const readyMs = await timeToReady([...wspCommand(root), 'serve'], projectEnv);
  rows.push({
    scenario: 'wsp serve ready (existing database), ms',
    engine,
    variant: 'project',
    rps: NaN,
    p50: Math.round(readyMs),
    p99: NaN,
    rssMb: NaN,
    errors: 0,
    note: 'median of 5 start-ups, each asked every 5 ms',
  });
  return rows;
}

/**
 * Two server processes on one PostgreSQL under the load one had: the combined throughput of
 * secret-version writes, and a count afterwards showing that every acknowledged write is there
 * once (versions numbered 1..N without gap or repeat).
 */
async function scaleOut(first: Server, api: Api, creds: Credentials, db: ReturnType<typeof openBenchDb>, env: Record<string, string>): Promise<Row[]> {
  const h = { authorization: `Bearer ${creds.api_token}`, 'content-type': 'application/json' };
  const secret = (await api('POST', '/v1/secrets', h, { name: 'scale-out' })).json;
  const req = { method: 'POST' as const, path: `/v1/secrets/${secret.id}/versions`, headers: h, body: JSON.stringify({ data: Buffer.alloc(256, 1).toString('base64') }), expectStatus: 201 };
  const second = await startServer([...wspCommand(root), 'serve'], env, await freePort());
  await schemasCompiled(second);
  const spec = (s: Server, c: number) => ({ url: s.url + req.path, method: req.method, headers: req.headers, body: req.body, connections: c, durationSeconds: duration, expectStatus: 201 });
  try {
    const single = await load(spec(first, connections));
    const [a, b] = await Promise.all([load(spec(first, connections / 2)), load(spec(second, connections / 2))]);
    const acknowledged = single.ok + a.ok + b.ok;
    const [stats] = await db.all('select count(*) as n, count(distinct version_number) as d, max(version_number) as m from secret_versions where secret_id = ?', [secret.id]);
    const n = Number(stats!.n);
    const lost = Math.max(0, acknowledged - n);
    const doubled = n - Number(stats!.d);
    const gaps = Number(stats!.m) - n;
    if (lost || doubled || gaps) console.error(`scale-out: acknowledged ${acknowledged}, stored ${n}, repeated numbers ${doubled}, gaps ${gaps}`);
    const base = { engine: 'postgres', variant: 'project' as const, rssMb: NaN };
    return [
      { ...base, scenario: 'scale-out: POST secret versions, 1 process', rps: single.rps, p50: single.p50, p99: single.p99, rssMb: first.peakRssMb(), errors: single.errors + single.non2xx },
      {
        ...base,
        scenario: `scale-out: POST secret versions, 2 processes (${acknowledged} acknowledged, ${n} stored, ${lost} lost, ${doubled} doubled)`,
        rps: a.rps + b.rps,
        p50: maxFinite([a.p50, b.p50]),
        p99: maxFinite([a.p99, b.p99]),
        rssMb: second.peakRssMb(),
        // Stored may exceed acknowledged by the requests still in flight when the load stopped.
        errors: a.errors + b.errors + a.non2xx + b.non2xx + lost + doubled + gaps,
      },
    ];
  } finally {
    await second.stop();
  }
}

function printTable(rows: Row[]): void {
  const out: string[] = [];
  out.push(
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; load: ${describeClient()}; ${connections} connections, ${duration} s × ${repeat} (medians)`,
  );
  out.push('');
  out.push('| scenario | engine | variant | req/s | p50 ms | p99 ms | peak RSS MB | vs ceiling | vs floor | errors | note |');
  out.push('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    const ceiling = rows.find((x) => x.scenario === r.scenario && x.engine === r.engine && x.variant === 'ceiling');
    const floor = rows.find((x) => x.scenario === r.scenario && x.engine === r.engine && x.variant === 'floor');
    const ratio = (other?: Row, of: readonly Row['variant'][] = ['project']) => (of.includes(r.variant) && other && Number.isFinite(r.rps) ? (r.rps / other.rps).toFixed(2) : '');
    const n = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '');
    // Restores and renders a second are single digits: a decimal, which a read's thousands do not need.
    out.push(
      `| ${r.scenario} | ${r.engine} | ${r.variant} | ${n(r.rps, r.rps < 100 ? 1 : 0)} | ${n(r.p50, 1)} | ${n(r.p99, 1)} | ${n(r.rssMb)} | ${ratio(ceiling, ['project', 'reference'])} | ${ratio(floor)} | ${r.errors} | ${r.note ?? ''} |`,
    );
  }
  console.log(out.join('\n'));
}

/** One master key for the project and the floor, which both encrypt secret payloads. */
const masterKey = (await import('node:crypto')).randomBytes(32).toString('base64');

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(root, 'dist/cli/main.js'))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  const rows: Row[] = [];
  if (opts.engine === 'sqlite' || opts.engine === 'both') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-bench-'));
    rows.push(...(await benchEngine('sqlite', { WSP_DATA_DIR: dir, WSP_MASTER_KEY: masterKey })));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (opts.engine === 'postgres' || opts.engine === 'both') {
    await withPostgres(async (url) => {
      // Installs' git repositories live here even with PostgreSQL.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-bench-'));
      rows.push(...(await benchEngine('postgres', { DATABASE_URL: url, WSP_DATA_DIR: dir, WSP_MASTER_KEY: masterKey })));
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
  printTable(rows);
}

await main();
