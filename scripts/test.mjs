#!/usr/bin/env node
// Runs the whole suite once on SQLite and once on PostgreSQL; fails if either fails.
// PostgreSQL: WSP_TEST_PG_URL if set, else a throwaway server started here (scripts/pg-throwaway.sh).
// WSP_TEST_ENGINES=sqlite (or postgres) narrows the run, for local work only.
// WSP_TEST_TIMEOUT_MS (default 120000) is node's --test-timeout: under `node --test` (Node 20) it
// bounds each test file as a whole, and each test inside it, so a file's tests share one budget.
// WSP_TEST_CONCURRENCY (default 3): test files run at once. npm run soak raises the one, lowers the other.
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const filters = process.argv.slice(2);

function findTests(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'helpers' ? [] : findTests(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const files = findTests(path.join(root, 'test'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const engines = (process.env.WSP_TEST_ENGINES || 'sqlite,postgres').split(',').map((s) => s.trim());
let pgUrl = process.env.WSP_TEST_PG_URL;
let pgDir;
/** The data directory of a PostgreSQL this run started: the at-rest tests must scan its files (test/secrets/byte-scan.ts). */
let pgDataDir = process.env.WSP_TEST_PG_DATA_DIR;
if (engines.includes('postgres') && !pgUrl) {
  pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-pg-'));
  const port = String(20000 + Math.floor(Math.random() * 20000));
  try {
    pgUrl = execFileSync('bash', [path.join(root, 'scripts/pg-throwaway.sh'), 'start', port, pgDir], { encoding: 'utf8' }).trim();
    pgDataDir = path.join(pgDir, 'data');
  } catch (e) {
    console.error('could not start a throwaway PostgreSQL; set WSP_TEST_PG_URL to a database to test against');
    process.exit(1);
  }
  const stop = () => spawnSync('bash', [path.join(root, 'scripts/pg-throwaway.sh'), 'stop', pgDir]);
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
}

/**
 * Test apps each get a schema `t_<run id>...` (test/helpers/harness.ts); this run's are dropped
 * here, once none of its tests runs, and no other run's (several may share one PostgreSQL).
 */
const runId = `${Math.random().toString(36).slice(2, 8)}_`;
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

let failed = false;
for (const engine of engines) {
  console.log(`\n=== npm test on ${engine} (${files.length} files) ===\n`);
  const started = Date.now();
  const res = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${process.env.WSP_TEST_CONCURRENCY || 3}`, `--test-timeout=${process.env.WSP_TEST_TIMEOUT_MS || 120000}`, '--test-reporter=spec', ...files],
    { cwd: root, stdio: 'inherit', env: { ...process.env, WSP_TEST_ENGINE: engine, WSP_TEST_RUN_ID: runId, ...(pgUrl ? { WSP_TEST_PG_URL: pgUrl } : {}), ...(pgDataDir ? { WSP_TEST_PG_DATA_DIR: pgDataDir } : {}) } },
  );
  if (engine === 'postgres') await dropTestSchemas(pgUrl);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (res.status !== 0) {
    failed = true;
    console.error(`\n=== ${engine}: FAILED (${secs} s) ===`);
  } else {
    console.log(`\n=== ${engine}: passed (${secs} s) ===`);
  }
}
process.exit(failed ? 1 : 0);
