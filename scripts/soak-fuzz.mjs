#!/usr/bin/env node
// npm run soak:fuzz: the fuzz, property, race and crash tests of the suite scaled up, on SQLite and on
// PostgreSQL (the same engines and PostgreSQL setup as npm test: WSP_TEST_PG_URL, else a
// throwaway server; WSP_TEST_ENGINES narrows it). Arguments narrow the files like npm test's.
//   WSP_SOAK_RUNS          generated cases per route or field (default 2000)
//   WSP_SOAK_RACE_N        concurrent writers per race and retries per Idempotency-Key storm (default 50)
//   WSP_SOAK_CRASH_CYCLES  kill -9 cycles of the crash test (default 5)
//   WSP_SOAK_INSTALLS      renders queued for the two worker processes (default 200; npm test: 40)
//   WSP_SOAK_SEED          fast-check seed (default: a new one each run, printed, so a failure can be replayed)
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const runs = process.env.WSP_SOAK_RUNS || '2000';
const seed = process.env.WSP_SOAK_SEED || String(Math.floor(Math.random() * 2 ** 31));
const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [
      'test/security/fuzz-routes',
      'test/security/fuzz-boundary',
      'test/security/echo-strings',
      'test/dashboards/diff.property',
      'test/dashboards/api.property',
      'test/reliability/crash',
      'test/reliability/races',
      'test/installs/two-processes',
    ];

const raceN = process.env.WSP_SOAK_RACE_N || '50';
console.log(`soak: ${runs} runs per property, ${raceN} writers per race, seed ${seed} (replay with WSP_SOAK_SEED=${seed})`);
const res = spawnSync(process.execPath, [path.join(root, 'scripts/test.mjs'), ...files], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    WSP_FUZZ_RUNS: runs,
    WSP_FUZZ_SEED: seed,
    WSP_API_PROPERTY_RUNS: String(Math.max(20, Math.floor(Number(runs) / 10))),
    WSP_PROPERTY_RUNS: String(Math.max(300, Number(runs) * 5)),
    WSP_CRASH_CYCLES: process.env.WSP_SOAK_CRASH_CYCLES || '5',
    WSP_RACE_N: raceN,
    WSP_TWO_PROCESSES_INSTALLS: process.env.WSP_SOAK_INSTALLS || '200',
    // A file may run for long (node --test bounds each file as a whole by --test-timeout, see
    // scripts/test.mjs); one at a time, so each has the machine to itself.
    WSP_TEST_TIMEOUT_MS: process.env.WSP_TEST_TIMEOUT_MS || String(60 * 60 * 1000),
    WSP_TEST_CONCURRENCY: process.env.WSP_TEST_CONCURRENCY || '1',
  },
});
process.exit(res.status ?? 1);
