import { createHash } from 'node:crypto';
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import type { DB } from './tables.js';

/**
 * Running sums kept by an area's own writes (docs/decisions.md, "The renders series: day sums
 * kept by the renders' writes" and "machines_running: a running sum kept by the machines'
 * status changes"): a table `(workspace_id, key, <second>, p)` with a primary key in that
 * order, holding for each second at which a key's sum changed the sum up to the end of that
 * second, from the start of the second's period (a day for counters read as differences) or
 * from the beginning (`period` null, for gauges read as they are). A point's sum is then one
 * search whatever the rows before it.
 */
export interface PrefixSums {
  table: string;
  /** The column of seconds. */
  at: string;
  period: number | null;
}

const isPostgres = (db: Kysely<DB>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Adds each key's `delta` to its sums from second `at` on, in the caller's transaction: the rows
 * after it (in its period) move with it, and its own second gets a row (the sum before it, plus
 * the delta) when it has none. Writers of one workspace's period take turns (a PostgreSQL
 * transaction lock, SQLite's one writer): a row made for a later second must see the rows made
 * for earlier ones. Two statements on SQLite, one on PostgreSQL (after its lock). The lock is
 * the transaction's last: callers keep no other lock to take after it.
 */
export async function keepPrefixSums(trx: Kysely<DB>, s: PrefixSums, workspaceId: string, at: number, deltas: readonly { key: string; delta: number }[]): Promise<void> {
  if (!deltas.length) return;
  const start = s.period === null ? null : at - (at % s.period);
  const postgres = isPostgres(trx);
  if (postgres) {
    const lock = createHash('sha256')
      .update(`${s.table}:${workspaceId}:${start ?? ''}`)
      .digest()
      .readBigInt64BE(0);
    await sql`select pg_advisory_xact_lock(cast(${lock.toString()} as bigint))`.execute(trx);
  }
  const table = sql.table(s.table);
  const col = sql.ref(`${s.table}.${s.at}`);
  const sorted = [...deltas].sort((x, y) => (x.key < y.key ? -1 : 1));
  const keys = sql`k (key, delta) as (values ${sql.join(sorted.map((d) => sql`(cast(${d.key} as text), cast(${d.delta} as bigint))`))})`;
  const periodEnd = start === null ? sql`` : sql`and ${col} < ${start + s.period!}`;
  // Joined to the keys (not `key in (...)`), so that each key's rows are a search of their own.
  const update = sql`update ${table} set p = p + k.delta from k
    where ${sql.ref(`${s.table}.workspace_id`)} = ${workspaceId} and ${sql.ref(`${s.table}.key`)} = k.key and ${col} >= ${at} ${periodEnd}`;
  const r = sql.ref(`r.${s.at}`);
  const periodStart = start === null ? sql`` : sql`and ${r} >= ${start}`;
  // The row before the second is not one the update moves: on PostgreSQL both are one statement (one round trip, one snapshot taken after the lock).
  const insert = sql`insert into ${table} (workspace_id, key, ${sql.ref(s.at)}, p)
    select ${workspaceId}, k.key, cast(${at} as bigint), k.delta + coalesce((
      select r.p from ${table} r where r.workspace_id = ${workspaceId} and r.key = k.key ${periodStart} and ${r} < ${at}
      order by ${r} desc limit 1), 0)
    from k where 1 = 1
    on conflict (workspace_id, key, ${sql.ref(s.at)}) do nothing`;
  if (postgres) {
    await sql`with ${keys}, moved as (${update} returning 1) ${insert}`.execute(trx);
    return;
  }
  await sql`with ${keys} ${update}`.execute(trx);
  await sql`with ${keys} ${insert}`.execute(trx);
}

/**
 * The sum of `key` at the end of each second of `ats` (from the start of its period), in one
 * statement: every lookup from the same snapshot, so no write made meanwhile is in one of them
 * and not another.
 */
export async function prefixSumsAt(db: Kysely<DB>, s: PrefixSums, workspaceId: string, key: string, ats: readonly number[]): Promise<number[]> {
  const r = sql.ref(`r.${s.at}`);
  const lookup = (at: ReturnType<typeof sql.ref>) =>
    sql`(select r.p from ${sql.table(s.table)} r where r.workspace_id = ${workspaceId} and r.key = ${key} ${s.period === null ? sql`` : sql`and ${r} >= ${at} - ${at} % ${s.period}`} and ${r} <= ${at} order by ${r} desc limit 1)`;
  const { rows } = isPostgres(db)
    ? await sql<{
        i: number | string;
        p: number | string | null;
      }>`select u.i - 1 as i, ${lookup(sql.ref('u.at'))} as p from unnest(cast(${ats.map(String)} as bigint[])) with ordinality as u (at, i)`.execute(db)
    : await sql<{ i: number | string; p: number | string | null }>`select a.key as i, ${lookup(sql.ref('a.value'))} as p from json_each(${JSON.stringify(ats)}) a`.execute(db);
  const p = new Array<number>(ats.length).fill(0);
  for (const row of rows) p[Number(row.i)] = Number(row.p ?? 0);
  return p;
}
