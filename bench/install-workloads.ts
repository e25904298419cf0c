/**
 * Install workloads of `npm run bench` that are not one request under load: the restore storm
 * (other writers' latency with and without restores on many installs) and renders a second of
 * a 20-file package. Each runs through the project only, on the server the scenarios use, and
 * returns rows of the table.
 */
import { load, maxFinite, median, type LoadResult, type LoadSpec } from './lib/load.js';
import type { Server } from './lib/processes.js';
import type { Row } from './lib/row.js';
import { bearer, installRendered, installsSettled, json, must, packageWith, renderSettled, type Api } from './lib/seed.js';
import { secretVersionBody, type Credentials } from './scenarios.js';

export interface WorkloadContext {
  engine: string;
  project: Server;
  api: Api;
  creds: Credentials;
  durationSeconds: number;
  repeat: number;
  warmUpSeconds: number;
}

export interface Workload {
  /** What --only matches; every row's name starts with it. */
  name: string;
  run(ctx: WorkloadContext): Promise<Row[]>;
}

/** Writers and restorers alike: as many as the brief's storm (8 installs, one client each). */
const STORM_CLIENTS = 8;
const STORM = 'restore storm';

/**
 * Other writers' latency during a restore storm. Writers: POST /v1/secrets/{id}/versions (the
 * secret-write scenario's 1 KiB body, an API token) at 8 connections, first alone, then while 8
 * other clients each restore one install in a loop (If-Match: *, a unique Idempotency-Key per
 * request). Alone and storm alternate `repeat` times (medians), and before every run the
 * restores' jobs of the run before are waited for, so the "alone" runs are alone. The figure is
 * the writers' p99 during the storm over their p99 alone (target: within 2×).
 */
async function restoreStorm(ctx: WorkloadContext): Promise<Row[]> {
  const { api, creds, project } = ctx;
  const h = { ...bearer(creds.api_token), ...json };
  const secret = await must(api('POST', '/v1/secrets', h, { name: 'storm' }), 201);
  const pkg = await packageWith(api, h, 'storm-pkg', { 'app/config.yaml': 'replicas: {{replicas}}\nname: {{name}}\n', 'README.md': '# {{name}}\n' });
  const installs = await Promise.all(Array.from({ length: STORM_CLIENTS }, (_, i) => installRendered(api, h, pkg, `storm-${i}`, { replicas: 2, name: `storm-${i}` })));
  const ids = installs.map((i) => i.id);

  const writers = (seconds: number): LoadSpec => ({
    url: `${project.url}/v1/secrets/${secret.id}/versions`,
    method: 'POST',
    headers: h,
    body: secretVersionBody,
    connections: STORM_CLIENTS,
    durationSeconds: seconds,
    expectStatus: 201,
  });
  // One load per install, one connection each: a connection of a shared load could not be held
  // to one install (wrk's requests are per thread, autocannon's per request sequence).
  const restorers = (seconds: number): LoadSpec[] =>
    installs.map((inst) => ({
      url: `${project.url}/v1/installs/${inst.id}:restore`,
      method: 'POST',
      headers: { ...h, 'if-match': '*' },
      body: JSON.stringify({ render_id: inst.renderId }),
      connections: 1,
      durationSeconds: seconds,
      expectStatus: 200,
      uniqueHeaders: ['idempotency-key'],
    }));
  const storm = async (seconds: number) => {
    const [w, ...rs] = await Promise.all([load(writers(seconds)), ...restorers(seconds).map((s) => load(s))]);
    return { writers: w, restores: rs };
  };

  await storm(ctx.warmUpSeconds);
  const alone: LoadResult[] = [];
  const during: LoadResult[] = [];
  const restores: { rps: number; p50: number; p99: number; errors: number; answered: number }[] = [];
  for (let i = 0; i < ctx.repeat; i++) {
    await installsSettled(api, h, ids);
    alone.push(await load(writers(ctx.durationSeconds)));
    const s = await storm(ctx.durationSeconds);
    during.push(s.writers);
    restores.push({
      rps: s.restores.reduce((a, r) => a + r.rps, 0),
      p50: median(s.restores.map((r) => r.p50)),
      // The worst client that had an answer (a short run can end before a slow restore's first).
      p99: maxFinite(s.restores.map((r) => r.p99)),
      errors: s.restores.reduce((a, r) => a + r.errors + r.non2xx, 0),
      answered: s.restores.reduce((a, r) => a + r.ok, 0),
    });
  }
  await installsSettled(api, h, ids);

  const base = { engine: ctx.engine, variant: 'project' as const, rssMb: project.peakRssMb() };
  const med = (rs: { p50: number; p99: number; rps: number }[]) => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)) });
  const errs = (rs: LoadResult[]) => rs.reduce((a, r) => a + r.errors + r.non2xx, 0);
  const a = med(alone);
  const d = med(during);
  return [
    { ...base, scenario: `${STORM}: POST /v1/secrets/{id}/versions, writers alone (${STORM_CLIENTS} connections)`, ...a, errors: errs(alone) },
    {
      ...base,
      scenario: `${STORM}: the same writers during a restore storm`,
      ...d,
      errors: errs(during),
      note: `writers' p99 ${(d.p99 / a.p99).toFixed(2)}× alone (target ≤ 2)`,
    },
    {
      ...base,
      scenario: `${STORM}: restores/s of the storm (${STORM_CLIENTS} installs, one client each in a loop)`,
      rps: median(restores.map((r) => r.rps)),
      p50: median(restores.map((r) => r.p50)),
      p99: median(restores.map((r) => r.p99)),
      errors: restores.reduce((x, r) => x + r.errors, 0),
      note: `restores answered: ${restores.map((r) => r.answered).join(', ')}; p50: median of the clients; p99: the worst client`,
    },
  ];
}

const RENDER_FILES = 20;
const RENDER_INSTALLS = 4;
const RENDERS = `renders/s (${RENDER_FILES}-file package, ${RENDER_INSTALLS} installs)`;

/**
 * Renders a second of a 20-file package: one loop per install, each changing the install's
 * values (PATCH, If-Match its current ETag; no Idempotency-Key, which the PATCH does not
 * require) and polling the install until the render that PATCH queued has succeeded (a failed
 * or superseded one fails the run), for the duration. Loops start no new PATCH once the
 * duration is over; renders/s = renders succeeded / time until the last loop is done, and p50
 * and p99 are of one render from its PATCH to its success seen. A render is seen within ~10%
 * of its time after it succeeded (renderSettled's pauses), and with 4 loops and the
 * workspace's 2 renders at once (WSP_RENDERS_PER_WORKSPACE) the others' renders keep the
 * renderer busy meanwhile; the note says how many polls a render took.
 */
async function rendersPerSecond(ctx: WorkloadContext): Promise<Row[]> {
  const { api, creds, project } = ctx;
  const h = { ...bearer(creds.api_token), ...json };
  const files = Object.fromEntries(
    Array.from({ length: RENDER_FILES }, (_, i) => {
      const n = String(i + 1).padStart(2, '0');
      return [`files/f${n}.yaml`, `name: {{name}}\nindex: ${i + 1}\nreplicas: {{replicas}}\n`];
    }),
  );
  const pkg = await packageWith(api, h, 'render-pkg', files);
  const installs = await Promise.all(Array.from({ length: RENDER_INSTALLS }, (_, i) => installRendered(api, h, pkg, `render-${i}`, { name: `render-${i}`, replicas: 0 })));
  // A counter shared by the loops: every PATCH's values differ from the install's, so every one queues a render.
  let replicas = 0;

  const round = async (seconds: number) => {
    const t0 = performance.now();
    const until = t0 + seconds * 1000;
    const latencies: number[] = [];
    let polls = 0;
    await Promise.all(
      installs.map(async (inst, i) => {
        while (performance.now() < until) {
          const start = performance.now();
          const r = await api('PATCH', `/v1/installs/${inst.id}`, { ...h, 'if-match': inst.etag }, { values: { name: `render-${i}`, replicas: ++replicas } });
          if (r.status !== 200) throw new Error(`${RENDERS}: PATCH ${inst.id} answered ${r.status} ${JSON.stringify(r.json)}`);
          const renderId = r.json.last_render?.id;
          if (!renderId) throw new Error(`${RENDERS}: PATCH ${inst.id} queued no render: ${JSON.stringify(r.json)}`);
          const settled = await renderSettled(api, h, inst.id, renderId, { minPauseMs: 5, maxPauseMs: 200, timeoutMs: 60_000 });
          inst.etag = settled.etag;
          polls += settled.polls;
          latencies.push(performance.now() - start);
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), renders: latencies.length, elapsed, polls };
  };

  await round(ctx.warmUpSeconds);
  const rounds = [];
  for (let i = 0; i < ctx.repeat; i++) rounds.push(await round(ctx.durationSeconds));
  const renders = rounds.reduce((a, r) => a + r.renders, 0);
  const polls = rounds.reduce((a, r) => a + r.polls, 0);
  return [
    {
      scenario: RENDERS,
      engine: ctx.engine,
      variant: 'project',
      rps: median(rounds.map((r) => r.rps)),
      p50: median(rounds.map((r) => r.p50)),
      p99: median(rounds.map((r) => r.p99)),
      rssMb: project.peakRssMb(),
      errors: 0,
      note: `${rounds.map((r) => `${r.renders} in ${r.elapsed.toFixed(1)} s`).join(', ')}; latency: PATCH to success seen; ${(polls / Math.max(1, renders)).toFixed(1)} polls a render`,
    },
  ];
}

/** Nearest-rank percentile of a sample (ms). */
function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const installWorkloads: Workload[] = [
  { name: STORM, run: restoreStorm },
  { name: RENDERS, run: rendersPerSecond },
];
