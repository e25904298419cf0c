import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, api, startServer, WSP_BIN, wspEnv, type ServerProcess } from '../helpers/processes.js';
import { captureLines } from '../helpers/log-scan.js';

/**
 * `wsp serve --no-worker` serves and runs no job; `wsp worker` runs jobs and serves nothing; and
 * with several processes on one PostgreSQL each job runs once (docs/spec-gaps.md, "Packages, installs, renders"): installs' renders
 * queued while no worker runs (WSP_TWO_PROCESSES_INSTALLS of them: 40 in npm test, 200 in
 * npm run soak:fuzz), then two `wsp worker` processes take them at once. Every commit is
 * counted in the repositories. On SQLite (one process by design) one worker takes them.
 */
let tdb: TestDatabase;
let server: ServerProcess;
let boot: Record<string, string>;
const workers: WorkerProcess[] = [];

interface WorkerProcess {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | string>;
  stop(): Promise<number | string>;
}

/** `node bin/wsp.js worker`, running until stopped; resolves once it says it started. */
async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [WSP_BIN, 'worker'], { env: wspEnv({ WSP_LOG_LEVEL: 'info', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  captureLines('wsp worker', output);
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (d: Buffer) => {
      const parts = (rest + d.toString()).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts.filter(Boolean)) {
        output.push(line);
        if (line.includes('"worker started"')) started();
      }
    });
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await Promise.race([ready, exited.then((code) => Promise.reject(new Error(`wsp worker exited (${code}) before starting:\n${output.join('\n')}`)))]);
  clearTimeout(timer);
  const w: WorkerProcess = {
    child,
    output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
      try {
        return await exited;
      } finally {
        clearTimeout(kill);
      }
    },
  };
  workers.push(w);
  return w;
}

before(async () => {
  tdb = await openTestDatabase();
  boot = await adminJson(['bootstrap'], tdb.env);
  server = await startServer(tdb.env, ['--no-worker']);
});
after(async () => {
  await Promise.all([server?.stop(), ...workers.map((w) => w.stop())]);
  await tdb.cleanup();
});

const call = (method: string, url: string, body?: unknown) => api(server.url, method, url, { credential: boot.api_token!, ...(body === undefined ? {} : { body }) });
const repoDir = (installId: string) => path.join(tdb.dataDir, 'repos', `${installId}.git`);
const git = (installId: string, ...args: string[]) => execFileSync('git', args, { env: { PATH: process.env.PATH, GIT_DIR: repoDir(installId), GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' }).trim();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function renderStates(): Promise<Map<string, number>> {
  const rows = await tdb.database.db.selectFrom('renders').select(['state']).execute();
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.state, (counts.get(r.state) ?? 0) + 1);
  return counts;
}

/**
 * Waits until no render and no render job is queued or running (or fails after `ms`). Both: a
 * render's state is committed by its handler, its job's outcome just after, in a transaction of
 * the runner's own.
 */
async function settled(ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const states = await renderStates();
    const pendingJobs = await tdb.database.db.selectFrom('jobs').select('id').where('kind', '=', 'render.run').where('state', 'in', ['queued', 'running']).execute();
    if (!states.get('queued') && !states.get('running') && pendingJobs.length === 0) return;
    if (Date.now() > end) assert.fail(`renders still pending: ${JSON.stringify([...states])}, ${pendingJobs.length} render jobs unfinished`);
    await pause(100);
  }
}

let pkgId: string;
let versionId: string;

test('wsp serve --no-worker runs no job: a new install’s render stays queued; wsp worker alone then runs it', async () => {
  const pkg = await call('POST', '/v1/packages', { name: 'served' });
  assert.equal(pkg.status, 201, pkg.text);
  const version = await call('POST', `/v1/packages/${pkg.body.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}} {{n}}\n' } });
  assert.equal(version.status, 201, version.text);
  pkgId = pkg.body.id;
  versionId = version.body.id;
  const install = await call('POST', '/v1/installs', { name: 'alone', package_id: pkgId, version_id: versionId, values: { who: 'world', n: 0 } });
  assert.equal(install.status, 201, install.text);
  // Several poll periods of a worker (500 ms): a server with a worker would have run it by now.
  await pause(2500);
  const renders = await call('GET', `/v1/installs/${install.body.id}/renders`);
  assert.deepEqual(
    renders.body.data.map((r: { state: string }) => r.state),
    ['queued'],
  );
  const jobs = await tdb.database.db.selectFrom('jobs').select(['state', 'attempts']).where('kind', '=', 'render.run').execute();
  assert.deepEqual(jobs, [{ state: 'queued', attempts: 0 }], 'no process claimed it');

  const worker = await startWorker(tdb.env);
  await settled(30_000);
  const [render] = (await call('GET', `/v1/installs/${install.body.id}/renders`)).body.data;
  assert.equal(render.state, 'succeeded');
  assert.equal(git(install.body.id, 'rev-parse', 'main'), render.commit_sha);
  assert.equal(git(install.body.id, 'show', 'main:hello.txt'), 'Hello world 0');
  assert.equal((await call('GET', `/v1/installs/${install.body.id}`)).body.current_version.id, versionId);
  assert.equal(
    worker.output.some((l) => l.includes('"listening"')),
    false,
    'wsp worker serves no HTTP',
  );
  assert.equal(await worker.stop(), 0, 'SIGTERM: a clean exit');
  workers.splice(workers.indexOf(worker), 1);
});

const INSTALLS = Number(process.env.WSP_TWO_PROCESSES_INSTALLS ?? 40);

test(`${ENGINE === 'postgres' ? 'two wsp worker processes on one PostgreSQL' : 'one wsp worker (SQLite)'}: ${INSTALLS} queued renders each run exactly once`, async () => {
  // Queued while no worker runs: one render per install, so none can supersede another.
  const ids: string[] = [];
  const queuing = Date.now();
  const queue = Array.from({ length: INSTALLS }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const res = await call('POST', '/v1/installs', { name: `many-${i}`, package_id: pkgId, version_id: versionId, values: { who: `w${i}`, n: i } });
        assert.equal(res.status, 201, res.text);
        ids.push(res.body.id);
      }
    }),
  );
  assert.equal((await renderStates()).get('queued'), INSTALLS);
  process.stderr.write(`# ${INSTALLS} installs made in ${Date.now() - queuing} ms\n`);

  const count = ENGINE === 'postgres' ? 2 : 1;
  const started = Date.now();
  const pool = await Promise.all(Array.from({ length: count }, () => startWorker(tdb.env)));
  // Which processes held claims, sampled while they work (a claim's worker id names its pid).
  const holders = new Set<string>();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const rows = await tdb.database.db.selectFrom('jobs').select('locked_by').where('state', '=', 'running').execute();
      for (const r of rows) if (r.locked_by) holders.add(r.locked_by.split(':')[1]!);
      await pause(20);
    }
  })();
  try {
    await settled(90_000);
  } finally {
    sampling = false;
    await sampler;
  }
  const elapsed = Date.now() - started;

  assert.deepEqual([...(await renderStates())].sort(), [['succeeded', INSTALLS + 1]], 'every render succeeded, none superseded or failed');
  const jobs = await tdb.database.db.selectFrom('jobs').select(['id', 'state', 'attempts']).where('kind', '=', 'render.run').execute();
  assert.equal(jobs.length, INSTALLS + 1);
  for (const j of jobs) {
    // What the workers said of a job run more than once (the failure's cause is in their log).
    const said = () => pool.flatMap((w) => w.output.filter((l) => l.includes(j.id))).join('\n');
    assert.deepEqual([j.state, j.attempts], ['succeeded', 1], `job ${j.id} was attempted once\n${j.attempts === 1 ? '' : said()}`);
  }

  // The repositories are the judge: one commit per install, naming its one render.
  const renders = await tdb.database.db.selectFrom('renders').select(['id', 'install_id', 'commit_sha']).where('install_id', 'in', ids).execute();
  assert.equal(renders.length, INSTALLS);
  const byInstall = new Map(renders.map((r) => [r.install_id, r]));
  const seen = new Map<string, number>();
  for (const id of ids) {
    // One line per commit on main: its sha and its Render-Id trailer.
    const commits = git(id, 'log', '--format=%H %(trailers:key=Render-Id,valueonly,separator=%x2C)', 'main').split('\n');
    assert.equal(commits.length, 1, `${id}: commits on main = succeeded renders`);
    const [sha, renderId] = commits[0]!.split(' ');
    assert.equal(sha, byInstall.get(id)!.commit_sha);
    seen.set(renderId!, (seen.get(renderId!) ?? 0) + 1);
  }
  assert.equal(seen.size, INSTALLS);
  for (const r of renders) assert.equal(seen.get(r.id), 1, `Render-Id ${r.id} appears once`);

  const pids = new Set(pool.map((w) => String(w.child.pid)));
  for (const h of holders) assert.ok(pids.has(h), `claims are held only by the workers started here (${h})`);
  process.stderr.write(`# claims seen held by ${holders.size} of the ${count} worker process(es) (sampled every 20 ms; one may take them all on a loaded machine)\n`);
  process.stderr.write(`# ${INSTALLS} renders by ${count} worker process(es) in ${elapsed} ms\n`);
});
