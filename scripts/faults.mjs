#!/usr/bin/env node
// npm run faults: the fault suite of issue 22 (test/faults) at its long settings, one file at a
// time, on SQLite and PostgreSQL (the same engine setup as npm test; arguments narrow the files).
// npm test runs the same files at their short settings. Each test reports a row (test/faults/report.ts);
// the table of docs/reliability.md is printed at the end.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-faults-')), 'rows.jsonl');
const files = process.argv.slice(2).length ? process.argv.slice(2) : ['test/faults/'];
const res = spawnSync(process.execPath, [path.join(root, 'scripts/test.mjs'), ...files], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    WSP_FAULTS_LONG: '1',
    WSP_FAULTS_REPORT: report,
    WSP_TEST_TIMEOUT_MS: process.env.WSP_TEST_TIMEOUT_MS || String(30 * 60 * 1000),
    WSP_TEST_CONCURRENCY: process.env.WSP_TEST_CONCURRENCY || '1',
  },
});
const rows = fs.existsSync(report)
  ? fs
      .readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
if (rows.length) {
  console.log('\n| fault | engine | how injected | requests | acknowledged | lost | worst latency | recovery | notes |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const recovery = r.recoveryMs === null ? '—' : `${(r.recoveryMs / 1000).toFixed(1)} s`;
    console.log(`| ${r.fault} | ${r.engine} | ${r.injected} | ${r.requests} | ${r.acknowledged} | ${r.lost} | ${r.worstLatencyMs} ms | ${recovery} | ${r.notes ?? ''} |`);
  }
}
process.exit(res.status ?? 1);
