#!/usr/bin/env node
// npm run soak: a day's load, compressed (issue 22, item 8): test/faults/soak.test.ts drives a
// real `wsp serve` with a mix of every route family for WSP_SOAK_MINUTES (default 60) on SQLite
// and on PostgreSQL at once (the same engine setup as npm test: WSP_TEST_PG_URL, else a throwaway
// server; WSP_TEST_ENGINES narrows it), samples the server each minute and fails if memory,
// descriptors, database connections or event-loop delay grow, or if any answer is a 5xx or a 4xx
// the mix does not provoke on purpose. Its figures (and the fault table's row) are printed.
// npm run soak:fuzz is the scaled fuzz, race and crash run (scripts/soak-fuzz.mjs).
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const minutes = Number(process.env.WSP_SOAK_MINUTES || 60);
console.log(`soak: ${minutes} minutes of mixed load per engine`);
const res = spawnSync(process.execPath, [path.join(root, 'scripts/test.mjs'), 'test/faults/soak.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    WSP_SOAK_MINUTES: String(minutes),
    // The file's own bound (scripts/test.mjs kills a file after it): the run plus its setup and checks.
    WSP_TEST_TIMEOUT_MS: process.env.WSP_TEST_TIMEOUT_MS || String((minutes + 10) * 60_000),
    // Both engines at once: the soak measures growth, not speed, and an hour each is long enough.
    WSP_TEST_CONCURRENCY: process.env.WSP_TEST_CONCURRENCY || '2',
  },
});
process.exit(res.status ?? 1);
