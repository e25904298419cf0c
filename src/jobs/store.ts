import { sql, type Kysely } from 'kysely';
import type { DB, JobsTable } from '../db/tables.js';
import type { Engine } from '../db/database.js';
import { newId } from '../shared/ids.js';
import { isUniqueViolation } from '../db/database.js';
import type { NewJob } from './queue.js';

/**
 * A grouped job's turn among its kind's jobs, computed as it is queued (start-time fair queueing):
 * one after the group's last job still queued or running, and never before the turn under way
 * (the largest of the kind's running jobs, or when none runs the smallest queued), so a group
 * idle for a while gets no credit for it. A workspace that queues 50 renders takes turns 0..49;
 * one that queues a render after them takes the turn under way, and a fair claim (smallest turn
 * first) runs it next rather than after the 50. Two transactions queuing at once for one group
 * may take the same turn: the order is only less fair then, nothing is lost or run twice.
 */
function fairTurn(kind: string, group: string) {
  return sql<number>`(select case when t.under_way > t.next_of_group then t.under_way else t.next_of_group end from (select
      coalesce(
        (select max(fair_key) from jobs where kind = ${kind} and state = 'running'),
        (select min(fair_key) from jobs where kind = ${kind} and state = 'queued'),
        0) as under_way,
      coalesce((select max(fair_key) + 1 from jobs where group_key = ${group} and kind = ${kind} and state in ('queued', 'running')), 0) as next_of_group) t)`;
}

export const jobStore = {
  /**
   * Inserts a job with the attempts its kind gets (src/jobs/queue.ts), in the caller's
   * transaction when given one; null when the dedupe key exists.
   */
  async insert(db: Kysely<DB>, nowMs: number, job: NewJob, maxAttempts: number): Promise<string | null> {
    const id = newId('job');
    try {
      const res = await db
        .insertInto('jobs')
        .values({
          id,
          kind: job.kind,
          payload: JSON.stringify(job.payload ?? null),
          state: 'queued',
          attempts: 0,
          max_attempts: maxAttempts,
          run_at: job.runAt ?? nowMs,
          locked_by: null,
          locked_until: null,
          last_error: null,
          operation_id: job.operationId ?? null,
          dedupe_key: job.dedupeKey ?? null,
          group_key: job.group ?? null,
          fair_key: job.group ? fairTurn(job.kind, job.group) : 0,
          created_at: nowMs,
          updated_at: nowMs,
        })
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .executeTakeFirst();
      return Number(res.numInsertedOrUpdatedRows ?? 0) > 0 ? id : null;
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  },

  /**
   * Claims the next due job of `kinds` (queued and due, or running with an expired lease and
   * attempts left) for one worker, skipping the jobs of `skipGroups` (the groups holding their
   * share of a pool's slots in this worker): the first queued with `order` 'fifo', the smallest
   * turn (`fair_key`, see fairTurn) with 'fair', then the first queued. One statement, so two workers never claim the same
   * job: on PostgreSQL the inner select skips rows another worker has locked (FOR UPDATE SKIP
   * LOCKED: a claim never waits for another's); SQLite serializes writers. A job whose lease ran
   * out on its last attempt is never run again: see `exhausted`.
   */
  async claim(
    db: Kysely<DB>,
    engine: Engine,
    workerId: string,
    nowMs: number,
    leaseMs: number,
    kinds: readonly string[],
    skipGroups: readonly string[] = [],
    order: 'fifo' | 'fair' = 'fifo',
  ): Promise<JobsTable | null> {
    if (kinds.length === 0) return null;
    const lock = engine === 'postgres' ? sql`for update skip locked` : sql``;
    const groups = skipGroups.length === 0 ? sql`` : sql`and (group_key is null or group_key not in (${sql.join(skipGroups)}))`;
    const orderBy = order === 'fair' ? sql`order by fair_key, run_at, id` : sql`order by run_at, id`;
    const res = await sql<JobsTable>`
      update jobs set state = 'running', locked_by = ${workerId}, locked_until = ${nowMs + leaseMs},
        attempts = attempts + 1, updated_at = ${nowMs}
      where id = (
        select id from jobs
        where kind in (${sql.join(kinds)})
          and ((state = 'queued' and run_at <= ${nowMs}) or (state = 'running' and locked_until < ${nowMs} and attempts < max_attempts))
          ${groups}
        ${orderBy}
        limit 1
        ${lock}
      )
      returning *`.execute(db);
    return res.rows[0] ?? null;
  },

  /** How many jobs of these operations a live worker holds now (claimed, lease not run out). */
  heldFor: async (db: Kysely<DB>, nowMs: number, operationIds: readonly string[]): Promise<number> => {
    if (operationIds.length === 0) return 0;
    const row = await db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('operation_id', 'in', operationIds)
      .where('state', '=', 'running')
      .where('locked_until', '>=', nowMs)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Jobs whose lease ran out on their last attempt: their worker died every time; to be given up. */
  exhausted: (db: Kysely<DB>, nowMs: number, kinds: readonly string[], limit = 20): Promise<JobsTable[]> =>
    kinds.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom('jobs')
          .selectAll()
          .where('state', '=', 'running')
          .where('locked_until', '<', nowMs)
          .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
          .where('kind', 'in', kinds)
          .limit(limit)
          .execute(),

  /**
   * Takes over a job whose lease ran out without counting an attempt (to give it up, not to run
   * it); false when another worker took it first.
   */
  async takeOver(db: Kysely<DB>, id: string, workerId: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const res = await db
      .updateTable('jobs')
      .set({ locked_by: workerId, locked_until: nowMs + leaseMs, updated_at: nowMs })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .where('locked_until', '<', nowMs)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Extends a lease; false when the job is no longer this worker's (it was taken over). */
  async heartbeat(db: Kysely<DB>, id: string, workerId: string, lockedUntil: number): Promise<boolean> {
    const res = await db.updateTable('jobs').set({ locked_until: lockedUntil }).where('id', '=', id).where('locked_by', '=', workerId).where('state', '=', 'running').executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Finishes a job this worker still holds; false when it lost the lease meanwhile. */
  async finish(
    db: Kysely<DB>,
    id: string,
    workerId: string,
    nowMs: number,
    outcome: { state: 'succeeded' | 'failed' } | { state: 'queued'; runAt: number },
    error: string | null,
    opts: { refundAttempt?: boolean } = {},
  ): Promise<boolean> {
    const res = await db
      .updateTable('jobs')
      .set({
        state: outcome.state,
        run_at: outcome.state === 'queued' ? outcome.runAt : sql`run_at`,
        locked_by: null,
        locked_until: null,
        last_error: error,
        updated_at: nowMs,
        ...(opts.refundAttempt ? { attempts: sql<number>`attempts - 1` } : {}),
      })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Gives a job this worker holds back to the queue, due now, its attempt not counted; false when no longer held. */
  async release(db: Kysely<DB>, id: string, workerId: string, nowMs: number): Promise<boolean> {
    const res = await db
      .updateTable('jobs')
      .set({ state: 'queued', run_at: nowMs, locked_by: null, locked_until: null, updated_at: nowMs, attempts: sql<number>`attempts - 1` })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  get: (db: Kysely<DB>, id: string) => db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst(),

  /** Finished jobs are kept a while for inspection, then removed. */
  purgeFinished: async (db: Kysely<DB>, beforeMs: number): Promise<number> => {
    const res = await db.deleteFrom('jobs').where('state', 'in', ['succeeded', 'failed']).where('updated_at', '<', beforeMs).executeTakeFirst();
    return Number(res.numDeletedRows);
  },
};
