import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'kysely';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { testRunner } from '../helpers/jobs.js';
import { captureLines } from '../helpers/log-scan.js';
import { startOperation } from '../../src/operations/service.js';
import { git } from '../../src/git/run-git.js';

/**
 * The job-error policy (src/jobs/failure.ts, docs/errors.md 7399): a job that fails on a
 * database or git error shows on its operation a documented code and a fixed message; the
 * error itself (SQL, git's stderr with a path of the server) is only in the log line of the
 * job, which names the job and its operation.
 */
const lines: string[] = [];

const h = useTestApp({
  setup: async () => {
    captureLines('job-errors runner', lines);
  },
});
const s = h.seeded;

const KINDS = { 't.sql': { maxAttempts: 2 }, 't.git': { maxAttempts: 1 } };

function runnerLoggingTo(out: string[]) {
  const stream = new Writable({
    write(chunk, _enc, done) {
      out.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return testRunner(h.database, h.clock, KINDS, { workerId: 'policy' }, pino({ level: 'info' }, stream));
}

async function failedOperation(kind: string, handler: () => Promise<unknown>) {
  const r = runnerLoggingTo(lines);
  r.register(kind, handler);
  const operationId = await startOperation(h.database.db, h.clock, s.workspaceId, kind);
  const jobId = (await r.queue.enqueue(h.database.db, { kind, payload: null, operationId }))!;
  for (let i = 0; i < KINDS[kind as keyof typeof KINDS].maxAttempts; i++) {
    await r.runDue();
    h.clock.advanceSeconds(600);
  }
  const res = await h.app.inject({ method: 'GET', url: `/v1/operations/${operationId}`, headers: as(s.apiToken) });
  assert.equal(res.statusCode, 200);
  const logged = lines
    .map((l) => JSON.parse(l) as { msg: string; job?: string; operation?: string; final?: boolean; err?: { message: string } })
    .filter((l) => l.msg === 'job failed' && l.job === jobId);
  return { operation: res.json(), jobId, operationId, logged };
}

test('a job that fails on a database error: 7399 and the fixed words on its operation, the SQL error only in its log line', async () => {
  const { operation, operationId, logged } = await failedOperation('t.sql', () => sql`select * from no_such_table_of_the_policy`.execute(h.database.db));
  assert.equal(operation.done, true);
  assert.deepEqual(operation.error, { code: 7399, message: 'The job failed on a database error; the server log has the details under its job id' });
  assert.doesNotMatch(JSON.stringify(operation), /no_such_table_of_the_policy/);
  assert.equal(logged.length, 2, 'one line per attempt');
  assert.equal(logged[1]!.final, true);
  assert.equal(logged[1]!.operation, operationId);
  assert.match(logged[1]!.err!.message, /no_such_table_of_the_policy/);
});

test("a job that fails on a git error: 7399 and the fixed words on its operation, git's stderr (a path of the server) only in its log line", async () => {
  const gitDir = path.join(h.config.dataDir, 'repos', 'missing-repository.git');
  const { operation, logged } = await failedOperation('t.git', () => git(['rev-parse', 'HEAD'], { gitDir }));
  assert.deepEqual(operation.error, { code: 7399, message: "The job could not read or write an install's git repository; the server log has the details under its job id" });
  assert.doesNotMatch(JSON.stringify(operation), new RegExp(h.config.dataDir));
  assert.equal(logged.length, 1);
  assert.match(logged[0]!.err!.message, /git rev-parse failed/);
  assert.ok(logged[0]!.err!.message.includes('missing-repository.git'), logged[0]!.err!.message);
});
