/**
 * The event series (`writes`, `secret_accesses`) count closed minutes from `event_counts`
 * (migration 0019), each minute counted from the events once, and only the rest from the events
 * themselves: the minutes a point's boundary cuts and the last few, still open. A day's series
 * then reads about 1,440 rows per event type and the events of a hundred-odd minutes, whatever
 * the day's traffic; reading every event of the range made it slower by the hour under the soak
 * (p99 97 → 497 ms, on SQLite holding the event loop throughout).
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Engine } from '../db/database.js';

/** The points of a series: point i counts (from + i·step, from + (i+1)·step]. */
export interface Buckets {
  from: number;
  step: number;
  count: number;
}

/**
 * A minute is counted once it ended this long ago: an event's `created_at` is taken when its
 * transaction writes it, and no transaction here lives minutes (statements are bounded by
 * WSP_DB_STATEMENT_TIMEOUT_SECONDS on PostgreSQL). Instances' clocks are assumed within this of each other.
 */
export const CLOSED_AFTER_SECONDS = 300;

/** What a series of events is narrowed to (the same on events and event_counts, which share the columns). */
export interface EventFilter {
  /** One type, or every type of a resource as `<resource>.*`. */
  type?: string | undefined;
  exclude?: readonly string[] | undefined;
}

/** The seconds (a, b]. */
export type Seconds = [number, number];

/** How a series is counted: the minutes counted ahead (first..last, each wholly in one point's step) and the spans counted from events. */
export interface CountPlan {
  minutes: { first: number; last: number } | null;
  raw: Seconds[];
}

const minuteStart = (m: number) => m * 60;

/** The plan for `b` when every minute up to `lastClosed` can be counted ahead. */
export function planCounts(b: Buckets, lastClosed: number): CountPlan {
  const raw: Seconds[] = [];
  const addRaw = (a: number, z: number) => {
    if (z <= a) return;
    const prev = raw[raw.length - 1];
    if (prev && prev[1] === a) prev[1] = z;
    else raw.push([a, z]);
  };
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < b.count; i++) {
    const start = b.from + i * b.step;
    const end = start + b.step;
    // Minutes m with (60m, 60m + 60] inside (start, end].
    const lo = Math.ceil(start / 60);
    const hi = Math.min(Math.floor(end / 60) - 1, lastClosed);
    if (lo > hi) {
      addRaw(start, end);
      continue;
    }
    addRaw(start, minuteStart(lo));
    addRaw(minuteStart(hi + 1), end);
    first = Math.min(first, lo);
    last = Math.max(last, hi);
  }
  return { minutes: first <= last ? { first, last } : null, raw };
}

/** The point of the row's `created_at` (0-based; out of 0..count-1 outside the range), as SQL. */
export function bucketed(b: Buckets) {
  return sql<number>`cast((created_at - ${b.from} - 1) / ${b.step} as integer)`;
}

/** The point whose step holds minute `m` wholly, or -1 when a boundary cuts it or it is outside the range. */
export function pointOfMinute(b: Buckets, m: number): number {
  const i = Math.floor((minuteStart(m) - b.from) / b.step);
  return i >= 0 && i < b.count && minuteStart(m + 1) <= b.from + (i + 1) * b.step ? i : -1;
}

/** The last minute closed at `now`. */
export const lastClosedMinute = (now: number) => Math.floor((now - CLOSED_AFTER_SECONDS) / 60) - 1;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a query over any tables: Kysely's builder is invariant in its table set, and this only adds a clause
function narrow<QB extends SelectQueryBuilder<any, any, any>>(q: QB, f: EventFilter): QB {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a query over any tables: Kysely's builder is invariant in its table set, and this only adds a clause
  let out = q as SelectQueryBuilder<any, any, any>;
  if (f.type?.endsWith('.*')) out = out.where('resource_type', '=', f.type.slice(0, -2));
  else if (f.type) out = out.where('type', '=', f.type);
  if (f.exclude?.length) out = out.where('type', 'not in', [...f.exclude]);
  return out as QB;
}

/** Spans per statement: SQLite allows 500 arms in a compound SELECT. */
const SPANS_PER_STATEMENT = 100;
/** Rows per insert: five values each, far inside SQLite's limit of bound values. */
const ROWS_PER_INSERT = 500;
/** Minutes counted per statement and transaction. */
const DAY = 1440;
/** Days a series counts before answering; more are counted by the series after it. */
const MAX_DAYS_AT_ONCE = 8;

/**
 * The next day of minutes to count for first..last, and the span once it is counted: the newest
 * first; a span that neither meets nor touches first..last is started afresh (counting the
 * minutes between could be years of them), its old rows left to the retention purge.
 */
export function nextPiece(span: { first: number; last: number } | undefined, first: number, last: number): { first: number; last: number; spanFirst: number; spanLast: number } | null {
  const empty = !span || span.last < span.first || span.last < first - 1 || span.first > last + 1;
  if (empty) {
    const from = Math.max(first, last - DAY + 1);
    return { first: from, last, spanFirst: from, spanLast: last };
  }
  if (last > span.last) {
    const to = Math.min(last, span.last + DAY);
    return { first: span.last + 1, last: to, spanFirst: span.first, spanLast: to };
  }
  if (first < span.first) {
    const from = Math.max(first, span.first - DAY);
    return { first: from, last: span.first - 1, spanFirst: from, spanLast: span.last };
  }
  return null;
}

/**
 * The events of a workspace in the seconds (a, z], through the index on `created_at`: only those
 * seconds are read (the (workspace_id, id) index would read from `a` to the workspace's newest
 * event). SQLite's planner, without statistics, prefers the equality on workspace_id; the unary
 * plus takes that column out of its choice (PostgreSQL chooses by its statistics).
 */
function eventsIn(db: Kysely<DB>, engine: Engine, workspaceId: string, [a, z]: Seconds) {
  const ws = engine === 'sqlite' ? sql`+workspace_id` : sql`workspace_id`;
  return db
    .selectFrom('events')
    .where(sql<boolean>`${ws} = ${workspaceId}`)
    .where('created_at', '>', a)
    .where('created_at', '<=', z);
}

/**
 * The events of `spans` (at most SPANS_PER_STATEMENT) by point of `b`. Each span is an arm of
 * one UNION ALL, planned on its own: as one OR of a hundred ranges, SQLite's planner (which,
 * without statistics, costs each range at a 64th of the table) scanned the whole table instead
 * (101 ms against 11 in the soak's database, for `secret_accesses`).
 */
export function rawCountsQuery(db: Kysely<DB>, engine: Engine, workspaceId: string, b: Buckets, spans: Seconds[], f: EventFilter) {
  const arms = spans.map((span) => narrow(eventsIn(db, engine, workspaceId, span), f).select('created_at'));
  const union = arms.slice(1).reduce((u, arm) => u.unionAll(arm), arms[0]!);
  return db
    .selectFrom(union.as('e'))
    .select([bucketed(b).as('b'), sql<number>`count(*)`.as('n')])
    .groupBy('b');
}

export const minuteCountsStore = {
  /** Counts the events of `spans` into the buckets of `b` (adding to `out`). */
  async countRaw(db: Kysely<DB>, engine: Engine, workspaceId: string, b: Buckets, spans: Seconds[], f: EventFilter, out: number[]): Promise<void> {
    for (let i = 0; i < spans.length; i += SPANS_PER_STATEMENT) {
      for (const r of await rawCountsQuery(db, engine, workspaceId, b, spans.slice(i, i + SPANS_PER_STATEMENT), f).execute()) {
        const k = Number(r.b);
        if (k >= 0 && k < b.count) out[k]! += Number(r.n);
      }
    }
  },

  /** The counted minutes first..last, each with its events' number under `f` (minutes without any left out). */
  async counted(db: Kysely<DB>, workspaceId: string, first: number, last: number, f: EventFilter): Promise<{ minute: number; n: number }[]> {
    const rows = await narrow(db.selectFrom('event_counts').where('workspace_id', '=', workspaceId).where('minute', '>=', first).where('minute', '<=', last), f)
      .select(['minute', sql<number>`sum(n)`.as('n')])
      .groupBy('minute')
      .execute();
    return rows.map((r) => ({ minute: Number(r.minute), n: Number(r.n) }));
  },

  /**
   * Makes sure minutes first..last of the workspace are counted, a day at a time: each day's
   * events are counted outside any transaction (closed minutes no longer change), then written
   * under a lock on the span's row if the span is still as read, so that neither SQLite's write
   * lock nor the row is held while events are read, and two instances never count a minute
   * twice. False when more than MAX_DAYS_AT_ONCE were missing (the caller counts this series from
   * the events; the days counted stay counted for the next).
   */
  async ensureCounted(db: Kysely<DB>, engine: Engine, workspaceId: string, first: number, last: number): Promise<boolean> {
    for (let round = 0; round < MAX_DAYS_AT_ONCE; round++) {
      const held = await db.selectFrom('event_count_spans').select(['first_minute', 'last_minute']).where('workspace_id', '=', workspaceId).executeTakeFirst();
      const span = held && { first: Number(held.first_minute), last: Number(held.last_minute) };
      const piece = nextPiece(span, first, last);
      if (!piece) return true;
      const rows = await eventsIn(db, engine, workspaceId, [minuteStart(piece.first), minuteStart(piece.last + 1)])
        .select([bucketed({ from: 0, step: 60, count: piece.last + 1 }).as('minute'), 'type', 'resource_type', sql<number>`count(*)`.as('n')])
        .groupBy(['minute', 'type', 'resource_type'])
        .execute();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('event_count_spans')
          .values({ workspace_id: workspaceId, first_minute: 0, last_minute: -1 })
          .onConflict((oc) => oc.column('workspace_id').doNothing())
          .execute();
        let read = trx.selectFrom('event_count_spans').select(['first_minute', 'last_minute']).where('workspace_id', '=', workspaceId);
        if (engine === 'postgres') read = read.forUpdate();
        const now = await read.executeTakeFirstOrThrow();
        const unchanged = span ? Number(now.first_minute) === span.first && Number(now.last_minute) === span.last : Number(now.last_minute) < Number(now.first_minute);
        // Another instance moved the span since it was read: read it again.
        if (!unchanged) return;
        const values = rows.map((r) => ({ workspace_id: workspaceId, minute: Number(r.minute), type: r.type, resource_type: r.resource_type, n: Number(r.n) }));
        for (let i = 0; i < values.length; i += ROWS_PER_INSERT) {
          await trx
            .insertInto('event_counts')
            .values(values.slice(i, i + ROWS_PER_INSERT))
            // A minute left counted when a span was started afresh is counted again, not twice.
            .onConflict((oc) => oc.columns(['workspace_id', 'minute', 'type']).doUpdateSet({ n: (eb) => eb.ref('excluded.n') }))
            .execute();
        }
        await trx.updateTable('event_count_spans').set({ first_minute: piece.spanFirst, last_minute: piece.spanLast }).where('workspace_id', '=', workspaceId).execute();
      });
    }
    return false;
  },

  /**
   * Forgets the counts of every minute the events' retention purge reached (any minute starting
   * before `before`): the one it cut is counted again, from the events left, when next needed.
   */
  async purge(db: Kysely<DB>, before: number): Promise<void> {
    const lastTouched = Math.ceil(before / 60) - 1;
    await db.deleteFrom('event_counts').where('minute', '<=', lastTouched).execute();
    await db
      .updateTable('event_count_spans')
      .set({ first_minute: lastTouched + 1 })
      .where('first_minute', '<=', lastTouched)
      .execute();
  },
};
