import pino from 'pino';
import type { Database } from '../../src/db/database.js';
import type { Clock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import { JobQueue, type JobKinds } from '../../src/jobs/queue.js';
import { JobRunner, type RunnerOptions } from '../../src/jobs/runner.js';
import { completeOperation } from '../../src/operations/service.js';
import { waitFor } from './wait.js';

/**
 * Waits until at least `k` jobs of `kind` made after `sinceMs` have succeeded: proof that
 * periodic work (an expiry scan) really ran after some moment, so that a following "nothing
 * more was sent" is an observation rather than the hope that a fixed sleep was long enough.
 */
export async function jobsSucceededSince(database: Database, kind: string, sinceMs: number, k: number, what: string): Promise<void> {
  const since = () => database.db.selectFrom('jobs').select(['state']).where('kind', '=', kind).where('created_at', '>', sinceMs).execute();
  await waitFor(`${k} ${kind} jobs after ${what}`, async () => (await since()).filter((j) => j.state === 'succeeded').length >= k, {
    timeoutMs: 45_000,
    detail: async () => {
      const states = (await since()).map((j) => j.state);
      return `the ${kind} jobs made since: ${states.length ? states.join(', ') : 'none'}`;
    },
  });
}

/**
 * A job runner of its own on the app's database (another worker, another instance), on a queue
 * with the table of kinds given (src/job-kinds.ts's JOB_KINDS for the platform's own kinds),
 * completing operations as the platform's runner does. Register its handlers with `define` or
 * `register`; enqueue with `runner.queue.enqueue`.
 */
export function testRunner(database: Database, clock: Clock, kinds: JobKinds, opts: RunnerOptions = {}, log: Logger = pino({ level: 'silent' })): JobRunner {
  const operations = { complete: (trx: Parameters<typeof completeOperation>[0], id: string, outcome: Parameters<typeof completeOperation>[3]) => completeOperation(trx, clock, id, outcome) };
  return new JobRunner({ db: database.db, engine: database.engine, clock, log, queue: new JobQueue(clock, kinds), operations }, opts);
}
