#!/usr/bin/env node
// npm test: every test file on SQLite and on PostgreSQL (a file that cannot touch a database runs
// once); fails if any file fails, or if any test is skipped that EXPECTED_SKIPS does not name.
//
// PostgreSQL: WSP_TEST_PG_URL if set, else a throwaway server started here (scripts/pg-throwaway.sh).
// WSP_TEST_ENGINES=sqlite (or postgres) narrows the run, for local work only; arguments narrow the
// files (any file whose path contains one of them).
// WSP_TEST_TIMEOUT_MS (default 120000) bounds each file as a whole, or three times its last
// recorded duration (test/timings.json) where that is longer: a file that takes 100 s on a quiet
// machine is not killed for being slow on a loaded one, and a file that hangs is still ended. A
// file killed for its time fails, and the runner says which test was under way (the reporter keeps
// that in WSP_TEST_PROGRESS).
// WSP_TEST_CONCURRENCY (default 4): files run at once. npm run soak raises the one, lowers the other.
// WSP_TEST_RECORD_TIMINGS=1 writes this run's durations to test/timings.json.
// A file whose source holds the line `// wsp-test: alone` measures time (a latency bound under an
// attack): it runs after the others, with no other file beside it, so what it measures is its own.
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
const filters = process.argv.slice(2);
const concurrency = Number(process.env.WSP_TEST_CONCURRENCY || 4);
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

/** Test apps each get a schema `t_<run id>...` (test/helpers/harness.ts); this run's are dropped at the end. */
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
const jobs = files.flatMap((file) =>
  usesDatabase(file) ? engines.map((engine) => ({ file, engine, label: engine })) : [{ file, engine: engines[0], label: 'once' }],
);
// Longest first; a file with no recorded time may be long: it goes first too.
const expected = (job) => timings[job.label]?.[job.file] ?? Number.MAX_SAFE_INTEGER;
jobs.sort((a, b) => expected(b) - expected(a));
/** How long a file may run before it is killed (see the top of this file). */
const limitFor = (job) => Math.max(timeoutMs, 3 * (timings[job.label]?.[job.file] ?? 0));

const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-test-report-'));

function runJob(job, index) {
  const report = path.join(reportDir, `${index}.json`);
  const progress = path.join(reportDir, `${index}.running.json`);
  const limitMs = limitFor(job);
  const args = [
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
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running.add(child);
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
      const underWay = timedOut ? whatWasRunning(progress) : undefined;
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
  `=== npm test: ${files.length} files on ${engines.join(' and ')} (${onceCount} without a database run once), ${jobs.length} runs, ${concurrency} at a time ===\n`,
);
const startedAll = Date.now();
const results = [];
const isAlone = (job) => /^\/\/ wsp-test: alone$/m.test(fs.readFileSync(path.join(root, job.file), 'utf8'));
const pooled = [...jobs.entries()].filter(([, job]) => !isAlone(job));
const alone = [...jobs.entries()].filter(([, job]) => isAlone(job));
async function drain(queue, width) {
  await Promise.all(
    Array.from({ length: Math.min(width, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const result = await runJob(next[1], next[0]);
        results.push(result);
        const ok = result.code === 0 && !result.timedOut;
        process.stdout.write(`\n${ok ? '✔' : '✖'} ${result.file} [${result.label}] (${(result.ms / 1000).toFixed(1)} s)\n${result.output}`);
        if (result.timedOut) process.stdout.write(`✖ killed after ${result.limitMs} ms (WSP_TEST_TIMEOUT_MS, or 3 × its recorded duration); ${result.underWay}\n`);
      }
    }),
  );
}
await drain(pooled, concurrency);
await drain(alone, 1);

if (engines.includes('postgres') && pgUrl) await dropTestSchemas(pgUrl);
fs.rmSync(reportDir, { recursive: true, force: true });
fs.rmSync(TEST_BUILD, { recursive: true, force: true });

const failedRuns = results.filter((r) => r.code !== 0 || r.timedOut);
const unexpected = [];
const skipLines = [];
for (const r of results) {
  for (const s of r.skipped) {
    const known = EXPECTED_SKIPS.find(
      (e) => e.file === r.file && (e.engine === 'any' || e.engine === r.engine) && (e.name === undefined || e.name === s.name) && (!e.when || e.when()),
    );
    skipLines.push(`  ${known ? 'expected  ' : 'UNEXPECTED'} [${r.label}] ${r.file} › ${s.name}: ${known ? known.why : s.reason}`);
    if (!known) unexpected.push(s);
  }
}

console.log('\n=== summary ===');
for (const label of [...engines, 'once']) {
  const rs = results.filter((r) => r.label === label);
  if (rs.length === 0) continue;
  const sum = (k) => rs.reduce((n, r) => n + (r.counts[k] ?? 0), 0);
  const cpu = rs.reduce((n, r) => n + r.ms, 0);
  const cpuOf = (k) => (rs.reduce((n, r) => n + (r[k] ?? 0), 0) / 1000).toFixed(0);
  console.log(`${label.padEnd(8)} files ${rs.length}, tests ${sum('tests')}, pass ${sum('pass')}, fail ${sum('fail')}, cancelled ${sum('cancelled')}, skipped ${sum('skipped')}, todo ${sum('todo')} (file time ${(cpu / 1000).toFixed(0)} s, cpu ${cpuOf('cpuMs')} s, with the processes the files started ${cpuOf('treeCpuMs')} s)`);
}
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
  fs.writeFileSync(process.env.WSP_TEST_RESULTS, JSON.stringify(results.map(({ output, ...r }) => r), null, 1));
}
if (process.env.WSP_TEST_RECORD_TIMINGS === '1') {
  const next = { ...timings };
  for (const r of results) next[r.label] = { ...next[r.label], [r.file]: r.ms };
  for (const label of Object.keys(next)) next[label] = Object.fromEntries(Object.entries(next[label]).sort(([a], [b]) => a.localeCompare(b)));
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
