/**
 * The server's own CPU per request, project against floor, for one scenario of bench/scenarios.ts:
 * each side runs under wrk (or autocannon) alternately, and the CPU its process used during the
 * run (utime + stime of /proc/<pid>/stat, every thread) is divided by the requests it answered.
 * Less noisy than req/s on shared cores, where the load generator and PostgreSQL take their share.
 *
 *   npx tsx bench/cpu-per-request.ts "GET /v1/api_tokens (sk_svc_"   (npm run build first)
 *   BENCH_PG_URL=postgres://... an empty database for PostgreSQL; SECONDS (3), ROUNDS (3);
 *   BENCH_PROFILE_DIR=DIR: the project writes a V8 CPU profile there when it stops;
 *   BENCH_KEYED=1: the secret-version POST with an Idempotency-Key per request (bench/scenarios.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startServer, freePort, wspCommand, type Server } from './lib/processes.js';
import { load } from './lib/load.js';
import { openBenchDb } from './lib/db.js';
import type { Api } from './lib/seed.js';
import { scenarios } from './scenarios.js';

const root = path.resolve(import.meta.dirname, '..');
const only = process.argv[2] ?? 'GET /v1/api_tokens (sk_svc_';
const seconds = Number(process.env.SECONDS ?? 3);
const rounds = Number(process.env.ROUNDS ?? 3);
const sc = scenarios.find((s) => s.name.includes(only));
if (!sc || !sc.floor || sc.projectOnly) throw new Error(`no scenario with a floor matches "${only}"`);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-cpu-'));
const dbEnv: Record<string, string> = { WSP_DATA_DIR: dataDir, WSP_MASTER_KEY: randomBytes(32).toString('base64'), ...(process.env.BENCH_PG_URL ? { DATABASE_URL: process.env.BENCH_PG_URL } : {}) };
const creds = JSON.parse(execFileSync(process.execPath, [path.join(root, 'bin/wsp.js'), 'admin', 'bootstrap', '--json'], { env: { ...process.env, ...dbEnv }, encoding: 'utf8' }));
const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
const servers: Server[] = [];
const benchDb = openBenchDb(dbEnv);
try {
  const project = await startServer([...profile, ...wspCommand(root), 'serve'], { ...dbEnv, WSP_LOG_LEVEL: 'info', WSP_AUTH_FAILURES_PER_MINUTE: '100000000' }, await freePort());
  servers.push(project);
  for (let i = 0; i < 600 && !/^wsp_route_schemas_pending 0$/m.test(await (await fetch(project.url + '/metrics')).text()); i++) await new Promise((r) => setTimeout(r, 50));
  const api: Api = async (method, p, headers, body) => {
    const res = await fetch(project.url + p, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
  };
  const req = await sc.seed(api, creds, benchDb);
  const sample = await fetch(project.url + req.path, { method: req.method, headers: req.headers, ...(req.body !== undefined ? { body: req.body } : {}) });
  const bodyFile = path.join(dataDir, 'body.json');
  fs.writeFileSync(bodyFile, await sample.text());
  const floorEnv = { ...dbEnv, BENCH_ROUTE: req.route, BENCH_METHOD: req.method, BENCH_STATUS: String(req.expectStatus), BENCH_BODY_FILE: bodyFile, BENCH_SCENARIO: sc.floor };
  const floor = await startServer([path.join(root, 'bench/servers/floor.mjs')], floorEnv, await freePort());
  servers.push(floor);

  const cpuMs = (pid: number) => {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
  };
  const run = async (server: Server, secs: number) => {
    const before = cpuMs(server.pid);
    const r = await load({
      url: server.url + req.path,
      method: req.method,
      headers: req.headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      ...(req.uniqueHeaders ? { uniqueHeaders: req.uniqueHeaders } : {}),
      connections: 32,
      durationSeconds: secs,
      expectStatus: req.expectStatus,
    });
    return { rps: r.rps, p99: r.p99, cpuUs: ((cpuMs(server.pid) - before) * 1000) / (r.rps * secs), errors: r.errors + r.non2xx };
  };
  await run(project, 1);
  await run(floor, 1);
  const results = { project: [] as Awaited<ReturnType<typeof run>>[], floor: [] as Awaited<ReturnType<typeof run>>[] };
  for (let i = 0; i < rounds; i++) {
    results.project.push(await run(project, seconds));
    results.floor.push(await run(floor, seconds));
  }
  console.log(sc.name);
  for (const [side, rs] of Object.entries(results))
    console.log(side.padEnd(8), rs.map((r) => `${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(1)} ms, ${r.cpuUs.toFixed(0)} µs CPU, errors ${r.errors}`).join(' | '));
} finally {
  for (const s of servers) await s.stop();
  await benchDb.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
