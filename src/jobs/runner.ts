import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from '../shared/logger.js';
import type { DB, JobsTable } from '../db/tables.js';
import type { Engine } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import { ulid } from '../shared/ids.js';
import { jobStore } from './store.js';
import type { JobQueue } from './queue.js';
import { gaveUpFailure, PermanentJobError, publicFailure, RetryLaterError, type JobFailure } from './failure.js';

export interface Job<P = unknown> {
  id: string;
  kind: string;
  payload: P;
  /** 1 on the first run. */
  attempt: number;
  operationId: string | null;
}

/**
 * Does a job's work and returns the result recorded on its operation. Jobs run at least
 * once: a worker that dies mid-job loses its lease and another runs the job again, so a
 * handler must be safe to repeat (check state before acting, write with compare-and-swap).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one registry holds handlers of every payload type; each payload is checked against its schema when the job is queued
export type JobHandler<P = any> = (job: Job<P>) => Promise<unknown>;

/**
 * Called once when a job is given up without being run again: every attempt it had ended with
 * its worker gone (killed, out of memory) before it could record an outcome. `reason` is what the
 * operation's error says. Must be safe to repeat (a worker dying during it leaves the job to the
 * next worker).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one registry holds handlers of every payload type; each payload is checked against its schema when the job is queued
export type GiveUpHandler<P = any> = (job: Job<P>, reason: string) => Promise<void>;

/** One kind of background work, as an area hands it to the composition root (src/worker.ts). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one registry holds handlers of every payload type; each payload is checked against its schema when the job is queued
export interface JobDefinition<P = any> {
  kind: string;
  run: JobHandler<P>;
  onGiveUp?: GiveUpHandler<P>;
  /** Periodic work: scheduled every so many seconds, once per period across all workers. */
  everySeconds?: number;
}

/** Where a job's outcome is recorded for its caller: the operations area's `completeOperation`. */
export interface OperationOutcomes {
  complete(trx: Kysely<DB>, operationId: string, outcome: { result: unknown } | { error: JobFailure }): Promise<unknown>;
}

export interface RunnerDeps {
  db: Kysely<DB>;
  engine: Engine;
  clock: Clock;
  log: Logger;
  /** The queue this process enqueues on: the runner wakes when it is used. */
  queue: JobQueue;
  operations: OperationOutcomes;
}

interface Registration {
  handler: JobHandler;
  onGiveUp: GiveUpHandler | undefined;
}

interface Periodic {
  kind: string;
  everySeconds: number;
}

/**
 * Kinds of job with slots of their own in each worker: a job of these kinds runs only in these
 * slots, and no other job ever does. Work that can be slow for reasons outside the platform (a
 * webhook receiver that never answers) gets a pool, so it can fill only its own slots, never the
 * ones renders, machine jobs and periodic work run in.
 */
export interface JobPool {
  /** For logs. */
  name: string;
  kinds: readonly string[];
  /** The pool's slots in this worker: its jobs run at once, at most. */
  concurrency: number;
  /**
   * The most of this pool's jobs one group (`NewJob.group`: a workspace) has in hand at once in
   * this worker; unset: no share. A group at its share waits on itself: the claim skips its jobs,
   * so another group's jobs behind them in the queue still run. A pool with a share also claims
   * its groups' jobs in turn (src/jobs/store.ts, fairTurn) rather than first-in first-out.
   */
  perGroup?: number;
}

export interface RunnerOptions {
  /** How often an idle worker looks for due work. */
  pollMs?: number;
  /** How long a claim lasts without a heartbeat. */
  leaseMs?: number;
  /** The slots of every kind in no pool of `pools`: jobs run at once by them, at most. */
  concurrency?: number;
  /** Kinds with slots of their own (see JobPool); a kind is in one pool at most. */
  pools?: readonly JobPool[];
  workerId?: string;
}

/**
 * One pool as this worker runs it: its kinds (those of the pool that are registered; for the
 * default pool, every registered kind in no other pool), its slots, and the jobs each group has
 * in hand.
 */
class Lane {
  readonly slots = new Set<Promise<void>>();
  private readonly held = new Map<string, number>();
  /** Claims of a pool with a share, one after another (see claim in JobRunner). */
  private claims: Promise<unknown> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly kinds: readonly string[],
    readonly concurrency: number,
    readonly perGroup: number | undefined,
  ) {}

  /** The groups holding their share: the next claim skips them. */
  full(): string[] {
    if (this.perGroup === undefined) return [];
    return [...this.held].filter(([, n]) => n >= this.perGroup!).map(([g]) => g);
  }

  take(group: string | null): void {
    if (group !== null && this.perGroup !== undefined) this.held.set(group, (this.held.get(group) ?? 0) + 1);
  }

  give(group: string | null): void {
    if (group === null || this.perGroup === undefined) return;
    const n = (this.held.get(group) ?? 0) - 1;
    if (n > 0) this.held.set(group, n);
    else this.held.delete(group);
  }

  /** Runs `claim` after this lane's claims under way. */
  serially<T>(claim: () => Promise<T>): Promise<T> {
    const next = this.claims.then(claim);
    this.claims = next.catch(() => undefined);
    return next;
  }
}

const BASE_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 5 * 60 * 1000;
const FINISHED_JOB_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Exponential backoff with jitter: 1 s, 2 s, 4 s ... capped at 5 minutes. */
export function backoffMs(attempt: number): number {
  const base = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/**
 * The background work of every area, from a jobs table in the database: any number of
 * workers (in `wsp serve` or `wsp worker`, on one or several machines) share it and each job
 * runs once at a time. The composition root registers the areas' handlers (src/worker.ts);
 * areas enqueue through the JobQueue, usually in the transaction that makes the work necessary.
 * A job that fails shows on its operation what the job-error policy says (src/jobs/failure.ts).
 */
export class JobRunner {
  private readonly handlers = new Map<string, Registration>();
  private readonly periodic: Periodic[] = [];
  private readonly opts: Required<RunnerOptions>;
  private timer: NodeJS.Timeout | null = null;
  private running = 0;
  private stopped = true;
  /** Set by stop(): slots finish the job in hand and claim no more. */
  private halting = false;
  private idle: Promise<void> = Promise.resolve();
  /** The jobs this worker holds now (claimed, not yet finished). */
  private readonly inHand = new Set<string>();
  /** Set by release(): stop() no longer waits for the jobs in hand. */
  private released = false;
  private wake: (() => void) | null = null;
  /** The started runner's pools, each with its slots under way (fillSlots). */
  private lanes: Lane[] = [];

  constructor(
    private readonly deps: RunnerDeps,
    opts: RunnerOptions = {},
  ) {
    this.opts = {
      pollMs: opts.pollMs ?? 500,
      leaseMs: opts.leaseMs ?? 60_000,
      concurrency: opts.concurrency ?? 4,
      pools: opts.pools ?? [],
      workerId: opts.workerId ?? `${hostname()}:${process.pid}:${ulid().slice(-6)}`,
    };
    const pooled = new Set<string>();
    for (const pool of this.opts.pools) {
      if (!(pool.concurrency >= 1) || (pool.perGroup !== undefined && !(pool.perGroup >= 1))) throw new Error(`job pool ${pool.name} needs at least one slot, and a share of at least one`);
      for (const kind of pool.kinds) {
        if (pooled.has(kind)) throw new Error(`job kind ${kind} is in two pools`);
        pooled.add(kind);
      }
    }
    deps.queue.onEnqueue(() => this.wake?.());
  }

  /** The queue jobs of this runner's kinds are added to. */
  get queue(): JobQueue {
    return this.deps.queue;
  }

  register<P>(kind: string, handler: JobHandler<P>, opts: { onGiveUp?: GiveUpHandler<P> } = {}): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} is registered twice`);
    if (!this.deps.queue.kinds[kind]) throw new Error(`job kind ${kind} is not in the table of job kinds`);
    this.handlers.set(kind, { handler: handler as JobHandler, onGiveUp: opts.onGiveUp as GiveUpHandler | undefined });
  }

  /** Runs `kind` every `everySeconds`, once per period across all workers. */
  every(kind: string, everySeconds: number): void {
    this.periodic.push({ kind, everySeconds });
  }

  /** Registers an area's job definitions. */
  define(definitions: readonly JobDefinition[]): void {
    for (const d of definitions) {
      this.register(d.kind, d.run, d.onGiveUp ? { onGiveUp: d.onGiveUp } : {});
      if (d.everySeconds !== undefined) this.every(d.kind, d.everySeconds);
    }
  }

  /** The pools of the kinds registered now: the named ones, then the default pool of every other kind. */
  private makeLanes(): Lane[] {
    const registered = [...this.handlers.keys()];
    const pooled = new Set(this.opts.pools.flatMap((p) => p.kinds));
    return [
      ...this.opts.pools.map(
        (p) =>
          new Lane(
            p.name,
            p.kinds.filter((k) => this.handlers.has(k)),
            p.concurrency,
            p.perGroup,
          ),
      ),
      new Lane(
        'default',
        registered.filter((k) => !pooled.has(k)),
        this.opts.concurrency,
        undefined,
      ),
    ].filter((lane) => lane.kinds.length > 0);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.halting = false;
    const kinds = [...this.handlers.keys()];
    this.lanes = this.makeLanes();
    let sweptAt = -Infinity;
    const loop = async () => {
      if (this.stopped) return;
      try {
        // Periodic work and given-up jobs at the poll's cadence, not on every wake: an enqueue
        // wakes the loop for its job, and a fan-out's auto-updates queue hundreds of renders a
        // second, each pass of which scheduled every periodic kind (one insert each) again.
        const now = performance.now();
        if (now - sweptAt >= this.opts.pollMs) {
          sweptAt = now;
          await this.schedulePeriodic();
          await this.giveUpExhausted(kinds);
        }
        for (const lane of this.lanes) this.fillSlots(lane);
      } catch (err) {
        this.deps.log.error({ err }, 'job loop failed; retrying');
      }
      if (this.stopped) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, this.opts.pollMs);
      });
      this.wake = null;
      void loop();
    };
    this.idle = loop();
  }

  /** Stops claiming work and waits for the jobs under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.halting = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.idle;
    while ((this.running > 0 || this.lanes.some((l) => l.slots.size > 0)) && !this.released) await new Promise((r) => setTimeout(r, 20));
  }

  /**
   * A shutdown that cannot wait for the jobs in hand any longer (its grace period is running out):
   * each goes back to the queue, due now and without counting the attempt, so another worker
   * runs it at once instead of after its lease. Their handlers are abandoned: whatever they still
   * do lands nowhere (finish and heartbeat need the lease), and handlers are safe to run again.
   * Stops claiming too, and lets stop() return. Returns the jobs released.
   */
  async release(): Promise<string[]> {
    this.halting = true;
    const released: string[] = [];
    try {
      for (const id of [...this.inHand]) {
        if (await jobStore.release(this.deps.db, id, this.opts.workerId, this.deps.clock.nowMs())) released.push(id);
      }
    } finally {
      // Only now may stop() return: the shutdown closes the database after it, and a release
      // still under way then fails ("driver has already been destroyed"), its job left to its lease.
      this.released = true;
    }
    if (released.length > 0) this.deps.log.warn({ jobs: released }, 'shutdown: jobs still running released to other workers');
    return released;
  }

  /**
   * Schedules due periodic work, then runs due jobs until none is left, each pool in as many
   * slots as it has. Returns how many ran. Pass after pass until one runs nothing: a job can
   * queue one of another pool whose slots found nothing due and ended meanwhile (an automatic
   * update queues renders, which have a pool of their own).
   */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      await this.schedulePeriodic();
      const kinds = [...this.handlers.keys()];
      await this.giveUpExhausted(kinds);
      const lanes = this.makeLanes();
      const ran = (await Promise.all(lanes.flatMap((lane) => Array.from({ length: lane.concurrency }, () => this.drain(lane))))).reduce((a, b) => a + b, 0);
      if (ran === 0) return total;
      total += ran;
    }
  }

  /**
   * A started runner's slots of one pool: each claims and runs jobs until none is due, and a free
   * slot is filled on the next pass (a poll or an enqueue), whatever the others are doing. A slot
   * held by a long job (a delivery to a receiver that hangs, a render) holds back no other job:
   * when the runner waited for all its slots before claiming again, one such job stopped every
   * other job of the process, periodic work included, until it ended.
   */
  private fillSlots(lane: Lane): void {
    while (lane.slots.size < lane.concurrency && !this.halting) {
      const slot: Promise<void> = this.drain(lane).then(
        () => {},
        (err: unknown) => this.deps.log.error({ err, pool: lane.name }, 'job slot failed; retrying on the next pass'),
      );
      lane.slots.add(slot);
      void slot.finally(() => lane.slots.delete(slot));
    }
  }

  /**
   * Claims a due job of the lane's kinds. With a share per group, the lane's claims run one after
   * another: each reads the groups at their share and counts the job it claimed before the next
   * begins, so two slots claiming at once cannot both take a group's last free place.
   */
  private claim(lane: Lane): Promise<JobsTable | null> {
    const { db, engine, clock } = this.deps;
    // A pool with a share claims in turn across groups: the share bounds how many of a group run
    // at once, not who goes first, and first-in first-out made a workspace whose job was queued
    // after another's burst wait for all of it.
    const order = lane.perGroup === undefined ? 'fifo' : 'fair';
    const once = () => jobStore.claim(db, engine, this.opts.workerId, clock.nowMs(), this.opts.leaseMs, lane.kinds, lane.full(), order);
    if (lane.perGroup === undefined) return once();
    return lane.serially(async () => {
      const job = await once();
      if (job) lane.take(job.group_key);
      return job;
    });
  }

  /** Claims and runs due jobs of one pool one after another until none is left. Returns how many ran. */
  private async drain(lane: Lane): Promise<number> {
    let ran = 0;
    for (;;) {
      if (this.halting) return ran;
      const job = await this.claim(lane);
      if (!job) return ran;
      try {
        // A claim that was under way when stop() came: the job goes back at once, not run here.
        if (this.halting) {
          await jobStore.release(this.deps.db, job.id, this.opts.workerId, this.deps.clock.nowMs());
          return ran;
        }
        ran++;
        await this.execute(job);
      } finally {
        lane.give(job.group_key);
      }
    }
  }

  /**
   * Jobs whose lease ran out on their last attempt: the worker died while running it every time
   * it was tried (a job that is killed for its memory would kill each worker that took it). A
   * claim never takes them (src/jobs/store.ts); here one worker takes each over, tells its area
   * (`onGiveUp`), and fails it and its operation with an error that says so.
   */
  private async giveUpExhausted(kinds: readonly string[]): Promise<void> {
    const { db, clock, log, operations } = this.deps;
    for (const row of await jobStore.exhausted(db, clock.nowMs(), kinds)) {
      if (!(await jobStore.takeOver(db, row.id, this.opts.workerId, clock.nowMs(), this.opts.leaseMs))) continue;
      const failure = gaveUpFailure(row.attempts);
      log.error({ job: row.id, kind: row.kind, attempts: row.attempts }, 'job given up: its worker died on every attempt');
      const job: Job = { id: row.id, kind: row.kind, payload: JSON.parse(row.payload), attempt: row.attempts, operationId: row.operation_id };
      try {
        await this.handlers.get(row.kind)!.onGiveUp?.(job, failure.message);
        const now = clock.nowMs();
        await db.transaction().execute(async (trx) => {
          if (!(await jobStore.finish(trx, row.id, this.opts.workerId, now, { state: 'failed' }, failure.message))) return;
          if (row.operation_id) await operations.complete(trx, row.operation_id, { error: failure });
        });
      } catch (err) {
        // The lease runs out again and the next round tries once more.
        log.error({ err, job: row.id, kind: row.kind }, 'giving up a job failed; retrying later');
      }
    }
  }

  private async schedulePeriodic(): Promise<void> {
    const now = this.deps.clock.nowMs();
    for (const p of this.periodic) {
      const slot = Math.floor(now / 1000 / p.everySeconds);
      await this.deps.queue.enqueue(this.deps.db, { kind: p.kind, payload: { slot }, dedupeKey: `periodic:${p.kind}:${slot}` });
    }
  }

  private async execute(row: { id: string; kind: string; payload: string; attempts: number; max_attempts: number; operation_id: string | null }): Promise<void> {
    const { db, clock, log, operations } = this.deps;
    const reg = this.handlers.get(row.kind)!;
    const job: Job = { id: row.id, kind: row.kind, payload: JSON.parse(row.payload), attempt: row.attempts, operationId: row.operation_id };
    this.running++;
    this.inHand.add(row.id);
    const beat = setInterval(
      () => {
        void jobStore.heartbeat(db, row.id, this.opts.workerId, clock.nowMs() + this.opts.leaseMs).catch(() => {});
      },
      Math.max(1000, Math.floor(this.opts.leaseMs / 3)),
    );
    try {
      const result = await reg.handler(job);
      const now = clock.nowMs();
      await db.transaction().execute(async (trx) => {
        if (!(await jobStore.finish(trx, row.id, this.opts.workerId, now, { state: 'succeeded' }, null))) return;
        if (row.operation_id) await operations.complete(trx, row.operation_id, { result: result ?? {} });
      });
    } catch (err) {
      // The jobs table keeps the error as raised, for operators; callers see only publicFailure's words.
      const raised = (err instanceof Error ? err.message : String(err)).slice(0, 2000);
      if (err instanceof RetryLaterError) {
        const runAt = Math.max(err.runAtMs, clock.nowMs());
        log.info({ job: row.id, kind: row.kind, runAt }, 'job waits');
        await jobStore.finish(db, row.id, this.opts.workerId, clock.nowMs(), { state: 'queued', runAt }, raised, { refundAttempt: true });
        return;
      }
      const final = err instanceof PermanentJobError || row.attempts >= row.max_attempts;
      const now = clock.nowMs();
      log.warn({ job: row.id, kind: row.kind, operation: row.operation_id, attempt: row.attempts, final, err }, 'job failed');
      await db.transaction().execute(async (trx) => {
        const outcome = final ? { state: 'failed' as const } : { state: 'queued' as const, runAt: now + backoffMs(row.attempts) };
        if (!(await jobStore.finish(trx, row.id, this.opts.workerId, now, outcome, raised))) return;
        if (final && row.operation_id) await operations.complete(trx, row.operation_id, { error: publicFailure(err) });
      });
    } finally {
      clearInterval(beat);
      this.inHand.delete(row.id);
      this.running--;
    }
  }

  /** Removes finished jobs older than a week. */
  async purge(): Promise<number> {
    return jobStore.purgeFinished(this.deps.db, this.deps.clock.nowMs() - FINISHED_JOB_RETENTION_MS);
  }
}
