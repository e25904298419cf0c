#!/usr/bin/env node
// npm test: every test file on SQLite and on PostgreSQL (a file that cannot touch a database runs
// once); fails if any file fails, or if any test is skipped that EXPECTED_SKIPS does not name.
//
// PostgreSQL: WSP_TEST_PG_URL if set, else a throwaway server started here (scripts/pg-throwaway.sh);
// WSP_TEST_PG_THROWAWAY=1 says the given server is deleted after the run (.ci/run), so the run's
// test schemas are not dropped first.
// WSP_TEST_ENGINES=sqlite (or postgres) narrows the run, for local work only; arguments narrow the
// files (any file whose path contains one of them).
// WSP_TEST_TIMEOUT_MS (default 120000) bounds each file as a whole, or three times its last
// recorded duration (test/timings.json) where that is longer: a file that takes 100 s on a quiet
// machine is not killed for being slow on a loaded one, and a file that hangs is still ended. A
// file killed for its time fails, and the runner says which test was under way (the reporter keeps
// that in WSP_TEST_PROGRESS).
// Files run at once: as many as the cores' CPU allows, each counted at the CPU it used per second
// of its last recorded run (test/timings.json's `cpu`; one core when there is no record): many
// files mostly wait (servers, leases, child processes), and a fixed number either idles the
// cores or starves them. At most 3 per core. WSP_TEST_CONCURRENCY=N: N at a time, whatever they
// use (npm run soak and npm run faults set it).
// WSP_TEST_RECORD_TIMINGS=1 writes this run's durations and CPU to test/timings.json.
// `--lint` (npm test passes it) adds ESLint (`eslint .`, typed: eslint.config.js) to the pool as one
// more job of the 'once' lane: it fails the run when it reports an error, and its output is printed
// like a file's. It starts first, at the lowest CPU priority, and the pool counts it at LINT_RATE
// (see `lintJob`). WSP_TEST_LINT_COMMAND (a JSON array) replaces the command: the runner's own test.
// A file whose source holds the line `// wsp-test: alone` measures time (a latency bound under an
// attack, against a baseline it measures in the same run): such files run first, one at a time,
// with only files that use little CPU beside them (BESIDE_ALONE), so what they measure is theirs.
//
// Why its own scheduler rather than `node --test`: one pool for both engines, longest files
// first (test/timings.json), so no core idles while the last long file of one engine finishes;
// `node --test` gives every file one environment, and so needs a run per engine, each with a tail.
// The files run bundled (scripts/build-tests.mjs), each in a process of its own, as before.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTests, BUNDLES } from './build-tests.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const lint = process.argv.includes('--lint');
const filters = process.argv.slice(2).filter((a) => a !== '--lint');
/** Files run at once: WSP_TEST_CONCURRENCY if set, a fixed number; else as many as the cores' CPU allows (see `rateOf`). */
const fixedConcurrency = process.env.WSP_TEST_CONCURRENCY ? Number(process.env.WSP_TEST_CONCURRENCY) : undefined;
const cores = os.availableParallelism();
/** At most this many at once however little CPU they use: each holds servers, memory and PostgreSQL connections. */
const maxAtOnce = fixedConcurrency ?? 3 * cores;
/** The CPU (in cores) that the files running beside a file that measures time may use together. */
const BESIDE_ALONE = 0.35;
/** How long the longest waiting run may be passed by lighter ones before it waits for room. */
const HEAD_WAIT_MS = 20_000;
const timeoutMs = Number(process.env.WSP_TEST_TIMEOUT_MS || 120_000);
const TIMINGS = path.join(root, 'test/timings.json');

/**
 * The only skips a run may report; any other fails it, so a new skip is a decision someone
 * makes here, in review, not something that slips by.
 */
const EXPECTED_SKIPS = [
  ...['test/faults/full-disk.test.ts', 'test/faults/repository-volume.test.ts'].map((file) => ({
    engine: 'any',
    file,
    why: 'mounting a tmpfs or a bind mount needs root on Linux (CI and the development machine run as root)',
    when: () => process.platform !== 'linux' || process.getuid?.() !== 0,
  })),
  {
    engine: 'sqlite',
    file: 'test/jobs/claims.test.ts',
    name: 'SQLite has no row locks (see the test body)',
    why: 'row locks and SKIP LOCKED exist only on PostgreSQL',
  },
  ...['test/oauth/device-browser.test.ts', 'test/security/login-csrf-browser.test.ts'].map((file) => ({
    engine: 'any',
    file,
    why: 'no Chromium at /usr/bin/chromium, outside CI (.ci/run installs it and sets WSP_TEST_REQUIRE_BROWSER=1)',
    when: () => !fs.existsSync('/usr/bin/chromium') && process.env.WSP_TEST_REQUIRE_BROWSER !== '1',
  })),
];

function findTests(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'helpers' ? [] : findTests(p);
    return e.name.endsWith('.test.ts') ? [path.relative(root, p)] : [];
  });
}

/** WSP_TEST_DIR: another folder of test files (the runner's own test runs it on fixtures). */
const testDir = path.resolve(root, process.env.WSP_TEST_DIR || 'test');
const files = findTests(testDir)
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const engines = (process.env.WSP_TEST_ENGINES || 'sqlite,postgres').split(',').map((s) => s.trim());
let pgUrl = process.env.WSP_TEST_PG_URL;
/** Whether the server is deleted after the run, and its test schemas with it. */
const pgIsThrowaway = !pgUrl || process.env.WSP_TEST_PG_THROWAWAY === '1';
/** The data directory of a PostgreSQL this run started: the at-rest tests must scan its files (test/secrets/byte-scan.ts). */
let pgDataDir = process.env.WSP_TEST_PG_DATA_DIR;
if (engines.includes('postgres') && !pgUrl) {
  const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-pg-'));
  const port = String(20000 + Math.floor(Math.random() * 20000));
  try {
    pgUrl = execFileSync('bash', [path.join(root, 'scripts/pg-throwaway.sh'), 'start', port, pgDir], { encoding: 'utf8' }).trim();
    pgDataDir = path.join(pgDir, 'data');
  } catch {
    console.error('could not start a throwaway PostgreSQL; set WSP_TEST_PG_URL to a database to test against');
    process.exit(1);
  }
  process.on('exit', () => spawnSync('bash', [path.join(root, 'scripts/pg-throwaway.sh'), 'stop', pgDir]));
}

/** Test apps each get a schema `t_<run id>...` (test/helpers/harness.ts); this run's are dropped at the end, unless the server is thrown away. */
const runId = `${Math.random().toString(36).slice(2, 8)}_`;
const TEST_BUILD = await buildTests(runId.slice(0, -1), testDir);

/**
 * A file touches a database only through test/helpers/harness.ts (openTestDatabase, and the
 * ENGINE it exports) or by reading the engine's variables itself: one that does neither, directly
 * or through what it imports, behaves the same on both engines and runs once.
 */
const usesDatabase = (() => {
  const memo = new Map();
  const HARNESS = path.join(root, 'test/helpers/harness.ts');
  const visit = (file, seen) => {
    if (memo.has(file)) return memo.get(file);
    if (seen.has(file)) return false;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    let uses = file === HARNESS || /WSP_TEST_(ENGINE|PG_URL)\b/.test(text);
    for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)\.js'/g)) {
      if (uses) break;
      const target = path.resolve(path.dirname(file), `${spec}.ts`);
      if (fs.existsSync(target)) uses = visit(target, seen);
    }
    memo.set(file, uses);
    return uses;
  };
  return (rel) => visit(path.join(root, rel), new Set());
})();

/** The bundle of a test file (scripts/build-tests.mjs). */
const compiled = (rel) => path.join(TEST_BUILD, BUNDLES, path.relative(testDir, path.join(root, rel)).replace(/\.ts$/, '.js'));

/** Each test file's last recorded duration per engine ('once' for those run once). */
const timings = fs.existsSync(TIMINGS) ? JSON.parse(fs.readFileSync(TIMINGS, 'utf8')) : {};
const jobs = files.flatMap((file) => (usesDatabase(file) ? engines.map((engine) => ({ file, engine, label: engine })) : [{ file, engine: engines[0], label: 'once' }]));
/**
 * ESLint as a job (`--lint`). Typed linting is one process on one core for minutes (docs/decisions.md,
 * "A linter with type information"): run before the test files it would add its whole time to the
 * suite's. Beside them, at the lowest priority (nice 19), it takes the CPU the files leave idle,
 * above all while the files that measure time run beside light files only, and takes almost none
 * from a file that wants it; the pool therefore counts it at LINT_RATE, not at a core, and may run
 * it beside those files. It measures nothing, so a slow lint costs only its own wall time.
 */
const LINT_FILE = 'eslint .';
const LINT_RATE = 0.05;
/** However loaded the machine: a typed lint took 13 minutes on a machine running three suites. */
const LINT_LIMIT_MS = 40 * 60_000;
const lintCommand = process.env.WSP_TEST_LINT_COMMAND ? JSON.parse(process.env.WSP_TEST_LINT_COMMAND) : [process.execPath, path.join(root, 'node_modules/eslint/bin/eslint.js'), '.'];
const lintJob = { file: LINT_FILE, engine: engines[0], label: 'once', lint: true };
// Longest first; a file with no recorded time may be long: it goes first too.
const expected = (job) => timings[job.label]?.[job.file] ?? Number.MAX_SAFE_INTEGER;
jobs.sort((a, b) => expected(b) - expected(a));
/**
 * The CPU a run is expected to keep busy, in cores: its CPU over its wall time when last recorded
 * (test/timings.json's `cpu`: the file's process and the processes it started and waited for),
 * scaled so that the recorded runs together average MEAN_RATE. Scaled, because a run recorded on
 * a loaded machine has every file's wall time stretched and its CPU per second shrunk alike
 * (2026-11-28: 0.25 core a file on average at 4 at once, with two other suites on the cores):
 * what is kept is which files use more of a core than others. A file with no record counts as one
 * core. The PostgreSQL server's own work is in no file's figure: a run on PostgreSQL counts
 * PG_SHARE more (the server's CPU over the PostgreSQL runs' in that run: 226 s against 967 s).
 */
function rateOf(job) {
  const ms = timings[job.label]?.[job.file];
  const cpu = timings.cpu?.[job.label]?.[job.file];
  if (!ms || cpu === undefined) return 1;
  const rate = (cpu / ms) * rateScale * (job.engine === 'postgres' ? 1 + PG_SHARE : 1);
  return Math.min(1, Math.max(0.05, rate));
}
const PG_SHARE = 0.25;
/** Half a core a file on average: 4 at once on 2 cores, the fixed number before, which ran well. */
const MEAN_RATE = 0.5;
const rateScale = (() => {
  let cpu = 0;
  let wall = 0;
  for (const [label, byFile] of Object.entries(timings.cpu ?? {})) {
    for (const [file, ms] of Object.entries(byFile)) {
      if (!timings[label]?.[file]) continue;
      cpu += ms;
      wall += timings[label][file];
    }
  }
  return cpu > 0 ? MEAN_RATE / (cpu / wall) : 1;
})();
/** How long a file may run before it is killed (see the top of this file). */
const limitFor = (job) => Math.max(timeoutMs, 3 * (timings[job.label]?.[job.file] ?? 0), job.lint ? LINT_LIMIT_MS : 0);

const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-test-report-'));

function runJob(job, index) {
  const report = path.join(reportDir, `${index}.json`);
  const progress = path.join(reportDir, `${index}.running.json`);
  const limitMs = limitFor(job);
  const [command, ...commandArgs] = job.lint ? lintCommand : [process.execPath];
  const args = job.lint
    ? commandArgs
    : [
        '--enable-source-maps',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${path.join(root, 'scripts/test-reporter.mjs')}`,
        `--test-reporter-destination=${report}`,
        compiled(job.file),
      ];
  const env = {
    ...process.env,
    WSP_TEST_ENGINE: job.engine,
    WSP_TEST_RUN_ID: runId,
    WSP_TEST_PROGRESS: progress,
    ...(pgUrl ? { WSP_TEST_PG_URL: pgUrl } : {}),
    ...(pgDataDir ? { WSP_TEST_PG_DATA_DIR: pgDataDir } : {}),
  };
  // Run under `node --test` itself (the runner's own test), the files would otherwise report to it
  // in its binary protocol instead of to scripts/test-reporter.mjs.
  delete env.NODE_TEST_CONTEXT;
  const started = Date.now();
  return new Promise((resolve) => {
    // Its own process group: a file killed for its time takes the servers and workers it started
    // with it (left running, they would load every later file of the run, and the machine after).
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running.add(child);
    if (job.lint) {
      try {
        os.setPriority(child.pid, 19);
      } catch {
        // not allowed here: it runs at the runner's priority, and the pool still counts it at LINT_RATE
      }
    }
    const output = [];
    child.stdout.on('data', (d) => output.push(d));
    child.stderr.on('data', (d) => output.push(d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, limitMs);
    child.on('exit', () => killGroup(child));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      let summary = { counts: {}, skipped: [] };
      try {
        summary = JSON.parse(fs.readFileSync(report, 'utf8'));
      } catch {
        // killed before the reporter wrote: the output says what happened
      }
      const underWay = timedOut ? (job.lint ? 'eslint had not finished' : whatWasRunning(progress)) : undefined;
      resolve({ ...job, code, signal, timedOut, limitMs, underWay, ms: Date.now() - started, output: Buffer.concat(output).toString(), ...summary });
    });
  });
}

/** What a killed file was doing, from the progress its reporter kept (scripts/test-reporter.mjs). */
function whatWasRunning(progress) {
  let state;
  try {
    state = JSON.parse(fs.readFileSync(progress, 'utf8'));
  } catch {
    return 'no test had started: the file was loading, or in a before hook of the file';
  }
  const { running, lastDone } = state;
  if (running.length > 0) {
    const inner = running.at(-1);
    // node:test runs a before or beforeEach hook once the test it precedes is dequeued: the hook is under way in its name.
    return `under way: ${running.map((r) => `"${r.name}"`).join(' › ')} (for ${((Date.now() - inner.since) / 1000).toFixed(1)} s, the test or a hook run before it)`;
  }
  return lastDone ? `no test under way: a hook, or the file's own code, after "${lastDone}" ended` : 'no test had started: a before hook of the file';
}

/** Kills a test file's process and whatever it left running in its group. */
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

const running = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const child of running) killGroup(child);
    process.exit(130);
  });
}

const onceCount = jobs.filter((j) => j.label === 'once').length;
console.log(
  `=== npm test: ${lint ? 'eslint and ' : ''}${files.length} files on ${engines.join(' and ')} (${onceCount} without a database run once), ${jobs.length} runs, ${fixedConcurrency ? `${fixedConcurrency} at a time` : `as many at a time as ${cores} cores' CPU allows (at most ${maxAtOnce})`} ===\n`,
);
const startedAll = Date.now();
const pgCpuAtStart = postgresCpuMs();
const results = [];
const isAlone = (job) => /^\/\/ wsp-test: alone$/m.test(fs.readFileSync(path.join(root, job.file), 'utf8'));
const queue = jobs.map((job, index) => ({ job, index, alone: isAlone(job), rate: rateOf(job) }));
// The files that measure time first, each beside light files only (see `fits`): run last, they
// were a serial tail after the pool had drained (310 s in the run of 2026-11-28, docs/reliability.md §10).
queue.sort((a, b) => Number(b.alone) - Number(a.alone));
// The lint before them all (see `lintJob`).
if (lint) queue.unshift({ job: lintJob, index: jobs.length, alone: false, rate: LINT_RATE });
await new Promise((allDone) => {
  /** The runs under way. */
  const now = new Set();
  /** When the head of the queue was first passed over for a lighter file (see `pick`). */
  let headWaitingSince;
  const report = (result) => {
    results.push(result);
    const ok = result.code === 0 && !result.timedOut;
    process.stdout.write(`\n${ok ? '✔' : '✖'} ${result.file} [${result.label}] (${(result.ms / 1000).toFixed(1)} s)\n${result.output}`);
    if (result.timedOut) process.stdout.write(`✖ killed after ${result.limitMs} ms (WSP_TEST_TIMEOUT_MS, or 3 × its recorded duration); ${result.underWay}\n`);
  };
  const fits = (next) => {
    if (now.size === 0) return true;
    if (now.size >= maxAtOnce) return false;
    if (fixedConcurrency) return !next.alone && ![...now].some((r) => r.alone);
    const load = [...now].reduce((n, r) => n + r.rate, 0);
    // Beside a file that measures time, only files that use little CPU, and little of it together.
    const aloneRunning = [...now].some((r) => r.alone);
    if (next.alone || aloneRunning) {
      const others = [...now].filter((r) => !r.alone);
      if (next.alone) return !aloneRunning && others.reduce((n, r) => n + r.rate, 0) <= BESIDE_ALONE;
      return next.rate <= BESIDE_ALONE && others.reduce((n, r) => n + r.rate, 0) + next.rate <= BESIDE_ALONE;
    }
    return load + next.rate <= cores;
  };
  /**
   * The longest run that fits; a lighter one may pass the head of the queue (the longest) only
   * for HEAD_WAIT_MS, after which the head waits for room, so a heavy long file is not starved
   * into the tail.
   */
  const pick = () => {
    if (queue.length === 0) return undefined;
    if (fits(queue[0])) {
      headWaitingSince = undefined;
      return queue.shift();
    }
    headWaitingSince ??= Date.now();
    if (Date.now() - headWaitingSince > HEAD_WAIT_MS && !queue[0].alone) return undefined;
    const at = queue.findIndex((q) => fits(q));
    return at < 0 ? undefined : queue.splice(at, 1)[0];
  };
  const fill = () => {
    for (let next = pick(); next; next = pick()) {
      const run = next;
      now.add(run);
      runJob(run.job, run.index).then((result) => {
        now.delete(run);
        report(result);
        fill();
      });
    }
    if (queue.length === 0 && now.size === 0) allDone();
  };
  fill();
});

// A server thrown away after the run (started here, or by .ci/run, which says so with
// WSP_TEST_PG_THROWAWAY=1) keeps them: dropping a run's few hundred schemas took minutes after the
// last file had ended.
if (engines.includes('postgres') && pgUrl && !pgIsThrowaway) await dropTestSchemas(pgUrl);
fs.rmSync(reportDir, { recursive: true, force: true });
fs.rmSync(TEST_BUILD, { recursive: true, force: true });

const failedRuns = results.filter((r) => r.code !== 0 || r.timedOut);
const unexpected = [];
const skipLines = [];
for (const r of results) {
  for (const s of r.skipped) {
    const known = EXPECTED_SKIPS.find((e) => e.file === r.file && (e.engine === 'any' || e.engine === r.engine) && (e.name === undefined || e.name === s.name) && (!e.when || e.when()));
    skipLines.push(`  ${known ? 'expected  ' : 'UNEXPECTED'} [${r.label}] ${r.file} › ${s.name}: ${known ? known.why : s.reason}`);
    if (!known) unexpected.push(s);
  }
}

console.log('\n=== summary ===');
for (const label of [...engines, 'once']) {
  const rs = results.filter((r) => r.label === label && !r.lint);
  if (rs.length === 0) continue;
  const sum = (k) => rs.reduce((n, r) => n + (r.counts[k] ?? 0), 0);
  const cpu = rs.reduce((n, r) => n + r.ms, 0);
  const cpuOf = (k) => (rs.reduce((n, r) => n + (r[k] ?? 0), 0) / 1000).toFixed(0);
  console.log(
    `${label.padEnd(8)} files ${rs.length}, tests ${sum('tests')}, pass ${sum('pass')}, fail ${sum('fail')}, cancelled ${sum('cancelled')}, skipped ${sum('skipped')}, todo ${sum('todo')} (file time ${(cpu / 1000).toFixed(0)} s, cpu ${cpuOf('cpuMs')} s, with the processes the files started ${cpuOf('treeCpuMs')} s)`,
  );
}
for (const r of results.filter((r) => r.lint))
  console.log(`eslint   ${r.code === 0 && !r.timedOut ? 'no errors' : 'FAILED (its output is above)'} (${(r.ms / 1000).toFixed(0)} s, at nice 19 beside the files)`);
const pgCpuAtEnd = postgresCpuMs();
if (pgCpuAtStart !== undefined && pgCpuAtEnd !== undefined) console.log(`PostgreSQL server cpu ${((pgCpuAtEnd - pgCpuAtStart) / 1000).toFixed(1)} s (its processes, ended ones included)`);
console.log('slowest runs (wall time; CPU of the test process itself, and with the processes it started):');
for (const r of [...results].sort((a, b) => b.ms - a.ms).slice(0, 12)) {
  console.log(`  ${(r.ms / 1000).toFixed(1).padStart(6)} s  cpu ${((r.cpuMs ?? 0) / 1000).toFixed(1).padStart(5)} s  ${((r.treeCpuMs ?? 0) / 1000).toFixed(1).padStart(5)} s  [${r.label}] ${r.file}`);
}
console.log(`skips (${skipLines.length}; the expected ones are listed in scripts/test.mjs):`);
for (const line of skipLines) console.log(line);
for (const r of failedRuns) console.log(`✖ failed: ${r.file} [${r.label}]${r.timedOut ? ` (timed out; ${r.underWay})` : ''}`);
if (unexpected.length) console.log(`✖ ${unexpected.length} unexpected skip(s): a skip must be named in EXPECTED_SKIPS (scripts/test.mjs)`);
console.log(`wall time ${((Date.now() - startedAll) / 1000).toFixed(1)} s`);

if (process.env.WSP_TEST_RESULTS) {
  fs.writeFileSync(
    process.env.WSP_TEST_RESULTS,
    JSON.stringify(
      results.map(({ output, ...r }) => r),
      null,
      1,
    ),
  );
}
if (process.env.WSP_TEST_RECORD_TIMINGS === '1') {
  const next = { ...timings, cpu: { ...timings.cpu } };
  for (const r of results.filter((r) => !r.lint)) {
    next[r.label] = { ...next[r.label], [r.file]: r.ms };
    const cpu = r.treeCpuMs ?? r.cpuMs;
    if (cpu !== undefined && !r.timedOut) next.cpu[r.label] = { ...next.cpu[r.label], [r.file]: cpu };
  }
  const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  for (const label of Object.keys(next)) next[label] = label === 'cpu' ? sorted(Object.fromEntries(Object.entries(next.cpu).map(([l, o]) => [l, sorted(o)]))) : sorted(next[label]);
  fs.writeFileSync(TIMINGS, `${JSON.stringify(next, null, 2)}\n`);
  console.log(`durations written to ${path.relative(root, TIMINGS)}`);
}

process.exit(failedRuns.length || unexpected.length ? 1 : 0);

async function dropTestSchemas(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query(`select nspname from pg_namespace where nspname like $1`, [`t\\_${runId.replace('_', '\\_')}%`]);
    for (const { nspname } of rows) await client.query(`drop schema "${nspname}" cascade`);
  } catch (err) {
    console.error(`could not drop the test schemas: ${err.message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The CPU the test PostgreSQL has used so far: the postmaster's own and that of the backends it
 * has reaped (one a connection), which no file's figures hold. Linux only; undefined elsewhere.
 */
function postgresCpuMs() {
  try {
    const pid = fs.readFileSync(path.join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0].trim();
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / 100;
  } catch {
    return undefined;
  }
}
