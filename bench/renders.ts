/**
 * Renders at scale (issue 54): renders a second of a 20-file package with more installs than the
 * workspace's renders at once, across several workspaces, with /healthz probed at a steady rate
 * meanwhile; and git's own rate for the same tree with the git CLI, the physical reference. The
 * four-install row of bench/install-workloads.ts stays as it was, so its figures compare with
 * earlier rounds.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { median } from './lib/load.js';
import type { Row } from './lib/row.js';
import { bearer, installRendered, json, must, packageWith, renderSettled, type RenderedInstall } from './lib/seed.js';
import type { Workload, WorkloadContext } from './install-workloads.js';

const RENDER_FILES = 20;
const WORKSPACES = 4;
const INSTALLS_PER_WORKSPACE = 4;
const THROUGHPUT = `renders/s (${RENDER_FILES}-file package, ${WORKSPACES * INSTALLS_PER_WORKSPACE} installs in ${WORKSPACES} workspaces)`;
const HEALTHZ = `/healthz p99 during the ${WORKSPACES * INSTALLS_PER_WORKSPACE}-install renders, ms`;
const REFERENCE = `renders/s, git CLI reference (${RENDER_FILES} files: hash-object -w, mktree ×2, commit-tree, update-ref; one repository)`;
/** /healthz asked every this many ms, whatever the answers take (a prober, not a load). */
const PROBE_EVERY_MS = 20;

/** The package's files: what bench/install-workloads.ts renders, so the rows compare. */
function renderFiles(): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: RENDER_FILES }, (_, i) => {
      const n = String(i + 1).padStart(2, '0');
      return [`files/f${n}.yaml`, `name: {{name}}\nindex: ${i + 1}\nreplicas: {{replicas}}\n`];
    }),
  );
}

/** Nearest-rank percentile of a sample (ms). */
function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** Asks /healthz every PROBE_EVERY_MS until stopped; answers each request's latency (ms). */
function probeHealthz(url: string): { stop: () => Promise<{ latencies: number[]; failures: number }> } {
  const latencies: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let failures = 0;
  const timer = setInterval(() => {
    const start = performance.now();
    const p = fetch(`${url}/healthz`)
      .then(async (r) => {
        await r.arrayBuffer();
        if (r.status !== 200) failures++;
        latencies.push(performance.now() - start);
      })
      .catch(() => void failures++)
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, PROBE_EVERY_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
      return { latencies, failures };
    },
  };
}

/**
 * 16 installs, four in each of four workspaces (the bootstrap's and three made by its user), one
 * loop each as in bench/install-workloads.ts: PATCH the values (If-Match), poll the install until
 * that render succeeded, again, for the duration. With a workspace's 2 renders at once
 * (WSP_RENDERS_PER_WORKSPACE) and 2 render threads, the queue is never empty: this measures
 * throughput, where 4 loops in one workspace measure one render's latency.
 */
async function rendersThroughput(ctx: WorkloadContext): Promise<Row[]> {
  const { api, creds, project } = ctx;
  const session = { ...bearer(creds.session_token), ...json };
  const headers: Record<string, string>[] = [{ ...bearer(creds.api_token), ...json }];
  for (let w = 1; w < WORKSPACES; w++) {
    const ws = await must(api('POST', '/v1/workspaces', session, { name: `renders-${w}` }), 201);
    headers.push({ ...session, 'service-context': ws.id });
  }
  const loops: { h: Record<string, string>; inst: RenderedInstall; name: string }[] = [];
  for (const [w, h] of headers.entries()) {
    const pkg = await packageWith(api, h, 'render-scale-pkg', renderFiles());
    const installs = await Promise.all(Array.from({ length: INSTALLS_PER_WORKSPACE }, (_, i) => installRendered(api, h, pkg, `scale-${w}-${i}`, { name: `scale-${w}-${i}`, replicas: 0 })));
    for (const inst of installs) loops.push({ h, inst, name: inst.id });
  }
  let replicas = 0;

  const round = async (seconds: number) => {
    const prober = probeHealthz(project.url);
    const t0 = performance.now();
    const until = t0 + seconds * 1000;
    const latencies: number[] = [];
    await Promise.all(
      loops.map(async ({ h, inst, name }) => {
        while (performance.now() < until) {
          const start = performance.now();
          const r = await api('PATCH', `/v1/installs/${inst.id}`, { ...h, 'if-match': inst.etag }, { values: { name, replicas: ++replicas } });
          if (r.status !== 200) throw new Error(`${THROUGHPUT}: PATCH ${inst.id} answered ${r.status} ${JSON.stringify(r.json)}`);
          const renderId = r.json.last_render?.id;
          if (!renderId) throw new Error(`${THROUGHPUT}: PATCH ${inst.id} queued no render`);
          const settled = await renderSettled(api, h, inst.id, renderId, { minPauseMs: 5, maxPauseMs: 200, timeoutMs: 60_000 });
          inst.etag = settled.etag;
          latencies.push(performance.now() - start);
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const probe = await prober.stop();
    return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), renders: latencies.length, elapsed, probe };
  };

  await round(ctx.warmUpSeconds);
  const rounds = [];
  for (let i = 0; i < ctx.repeat; i++) rounds.push(await round(ctx.durationSeconds));
  const base = { engine: ctx.engine, variant: 'project' as const, rssMb: project.peakRssMb() };
  const probeP99s = rounds.map((r) => percentile(r.probe.latencies, 99));
  return [
    {
      ...base,
      scenario: THROUGHPUT,
      rps: median(rounds.map((r) => r.rps)),
      p50: median(rounds.map((r) => r.p50)),
      p99: median(rounds.map((r) => r.p99)),
      errors: 0,
      note: `${rounds.map((r) => `${r.renders} in ${r.elapsed.toFixed(1)} s`).join(', ')}; latency: PATCH to success seen; target ≥ 50 (SQLite), ≥ 30 (PostgreSQL)`,
    },
    {
      ...base,
      scenario: HEALTHZ,
      rps: NaN,
      p50: median(rounds.map((r) => percentile(r.probe.latencies, 50))),
      p99: median(probeP99s),
      rssMb: NaN,
      errors: rounds.reduce((a, r) => a + r.probe.failures, 0),
      note: `asked every ${PROBE_EVERY_MS} ms during each run (p99 of runs: ${probeP99s.map((p) => p.toFixed(1)).join(', ')}); target < 50`,
    },
  ];
}

const run = promisify(execFile);

/** A git command in `gitDir`, stdin given; its stdout, trimmed. */
function git(gitDir: string, args: string[], input?: string): Promise<string> {
  if (input === undefined) return run('git', ['--git-dir', gitDir, ...args], { env: gitEnv }).then((r) => r.stdout.trim());
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--git-dir', gitDir, ...args], { env: gitEnv });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`git ${args[0]}: ${code} ${err}`))));
    child.stdin.end(input);
  });
}
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Workspace Platform',
  GIT_AUTHOR_EMAIL: 'renders@workspace-platform.invalid',
  GIT_COMMITTER_NAME: 'Workspace Platform',
  GIT_COMMITTER_EMAIL: 'renders@workspace-platform.invalid',
};

/**
 * Git's own rate for the same render: the 20 files (with new values each time, so every blob is
 * new, as in the rows above) written to a scratch directory and hashed in by one `git
 * hash-object -w --stdin-paths`, the two trees by `git mktree`, the commit by `git commit-tree`
 * on the branch's head, and the branch moved by `git update-ref` from that head: one render after
 * another into one bare repository with the platform's settings (core.fsync=committed, every
 * ref move logged). No database, no HTTP, no templates: the floor of the git part of a render.
 */
async function gitReference(ctx: WorkloadContext): Promise<Row[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-bench-git-'));
  const gitDir = path.join(dir, 'repo.git');
  const work = path.join(dir, 'files');
  fs.mkdirSync(work);
  await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitDir]);
  // The platform's settings for its repositories (src/git/git-storage.ts, REPO_CONFIG).
  fs.appendFileSync(path.join(gitDir, 'config'), '[core]\n\tfsync = committed\n\tfsyncMethod = fsync\n\tlogAllRefUpdates = always\n');
  const templates = Object.entries(renderFiles());
  let replicas = 0;
  let head: string | null = null;
  const oneRender = async () => {
    replicas++;
    const paths = templates.map(([p, t]) => {
      const file = path.join(work, path.basename(p));
      fs.writeFileSync(file, t.replace('{{name}}', 'reference').replace('{{replicas}}', String(replicas)));
      return file;
    });
    const blobs = (await git(gitDir, ['hash-object', '-w', '--stdin-paths'], paths.join('\n') + '\n')).split('\n');
    const sub = await git(gitDir, ['mktree'], templates.map(([p], i) => `100644 blob ${blobs[i]}\t${path.basename(p)}\n`).join(''));
    const tree = await git(gitDir, ['mktree'], `040000 tree ${sub}\tfiles\n`);
    const commit = await git(gitDir, ['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', `render ${replicas}`]);
    await git(gitDir, ['update-ref', 'refs/heads/main', commit, head ?? '0'.repeat(40)]);
    head = commit;
  };
  const round = async (seconds: number) => {
    const t0 = performance.now();
    const until = t0 + seconds * 1000;
    const latencies: number[] = [];
    while (performance.now() < until) {
      const start = performance.now();
      await oneRender();
      latencies.push(performance.now() - start);
    }
    return { rps: latencies.length / ((performance.now() - t0) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), renders: latencies.length };
  };
  try {
    await round(ctx.warmUpSeconds);
    const rounds = [];
    for (let i = 0; i < ctx.repeat; i++) rounds.push(await round(ctx.durationSeconds));
    return [
      {
        scenario: REFERENCE,
        engine: ctx.engine,
        variant: 'floor',
        rps: median(rounds.map((r) => r.rps)),
        p50: median(rounds.map((r) => r.p50)),
        p99: median(rounds.map((r) => r.p99)),
        rssMb: NaN,
        errors: 0,
        note: `${rounds.map((r) => r.renders).join(', ')} renders in ${ctx.durationSeconds} s runs, one after another, with the server idle beside; the repository on the bench's volume, as the server's`,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const renderWorkloads: Workload[] = [
  { name: THROUGHPUT, run: rendersThroughput },
  { name: REFERENCE, run: gitReference },
];
