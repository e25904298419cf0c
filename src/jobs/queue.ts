import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Clock } from '../shared/clock.js';
import { jobStore } from './store.js';

/** How a kind of job is run: the attempts it gets before it fails for good. */
export interface JobKind {
  maxAttempts: number;
}

/** Every kind of job a platform runs, by name: one table (src/job-kinds.ts), read by every enqueue. */
export type JobKinds = Readonly<Record<string, JobKind>>;

export interface NewJob {
  kind: string;
  payload: unknown;
  /** Unix ms; now when absent. */
  runAt?: number;
  operationId?: string | null;
  /** At most one job ever exists with a given key: how periodic work runs once across instances. */
  dedupeKey?: string | null;
  /**
   * Whom the job is done for (a webhook delivery's workspace): a pool with a per-group share
   * (src/jobs/runner.ts, `JobPool.perGroup`) never holds more of one group's jobs at once.
   */
  group?: string | null;
}

/**
 * The one way work is queued: `enqueue(trx, job)`, in the transaction that makes the work
 * necessary, so no work is lost and none is invented. The attempts a job gets come from the
 * table of kinds, never from the caller: a request, a job and an operator command (`wsp admin`,
 * which runs no worker) queue the same kind the same way.
 */
export class JobQueue {
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly clock: Clock,
    readonly kinds: JobKinds,
  ) {}

  /** Adds a job (in the caller's transaction when given one); null when its dedupe key exists. */
  async enqueue(db: Kysely<DB>, job: NewJob): Promise<string | null> {
    const kind = this.kinds[job.kind];
    if (!kind) throw new Error(`job kind ${job.kind} is not in the table of job kinds`);
    const id = await jobStore.insert(db, this.clock.nowMs(), job, kind.maxAttempts);
    // A local worker picks it up now rather than at its next poll (after the commit). Only a job
    // actually added wakes it: the runner enqueues its periodic work (deduplicated) on every pass,
    // and waking it for those would spin it without pause.
    if (id !== null) for (const listener of this.listeners) setImmediate(listener);
    return id;
  }

  /**
   * How many jobs of these operations a live worker is running now: work that must end before
   * what it works on is taken away (a deleted install's repository). A job whose worker died
   * counts again only once another claims it.
   */
  heldFor(db: Kysely<DB>, operationIds: readonly string[]): Promise<number> {
    return jobStore.heldFor(db, this.clock.nowMs(), operationIds);
  }

  /** Called after each enqueue: how a worker of this process hears of new work. */
  onEnqueue(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
