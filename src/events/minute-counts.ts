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

/** Sign-ins and secret reads are events but not writes (the `writes` series' filter). */
export const NOT_WRITES = ['session.created', 'session.failed', 'secret_version.accessed'] as const;

/**
 * The keys an event is counted under in event_prefix (migration 0031): its type, its resource,
 * and both again among writes, so that each filter a series asks reads one key.
 */
export function countKeysOf(type: string, resourceType: string): string[] {
  const keys = [`t:${type}`, `r:${resourceType}`];
  if (!(NOT_WRITES as readonly string[]).includes(type)) keys.push('w', `wr:${resourceType}`);
  return keys;
}

/** A key with no row: what `writes` of a type that is no write counts. */
const NOTHING = '-';

/** The key of event_prefix that counts `f`, or null for a filter it does not keep (its series sums the minutes). */
export function countKeyOf(f: EventFilter): string | null {
  const ex = f.exclude ?? [];
  const writes = ex.length === NOT_WRITES.length && NOT_WRITES.every((t) => ex.includes(t));
  if (ex.length && !writes) return null;
  const resource = f.type?.endsWith('.*') ? f.type.slice(0, -2) : undefined;
  if (resource !== undefined) return writes ? `wr:${resource}` : `r:${resource}`;
  if (f.type) return writes && ex.includes(f.type) ? NOTHING : `t:${f.type}`;
  return writes ? 'w' : null;
}

/** The first minute of minute m's day. */
export const dayOf = (m: number) => Math.floor(m / DAY) * DAY;

/** What a prefix lookup asks: the events under `key` from the start of the day of minute `at` to `at`, inclusive. */
interface Lookup {
  key: string;
  at: number;
}

/** Lookups per statement: four bound values each. */
const LOOKUPS_PER_STATEMENT = 200;

/**
 * The events under each lookup's key from its day's start to its minute: the row of the latest
 * counted minute of that day up to it (0 without one), one search of the primary key each.
 */
async function prefixes(db: Kysely<DB>, workspaceId: string, lookups: Lookup[]): Promise<number[]> {
  const out = new Array<number>(lookups.length).fill(0);
  for (let c = 0; c < lookups.length; c += LOOKUPS_PER_STATEMENT) {
    const chunk = lookups.slice(c, c + LOOKUPS_PER_STATEMENT);
    const values = sql.join(chunk.map((l, i) => sql`(cast(${c + i} as integer), cast(${l.key} as text), cast(${dayOf(l.at)} as bigint), cast(${l.at} as bigint))`));
    const { rows } = await sql<{ i: number | string; p: number | string | null }>`with asked (i, k, lo, hi) as (values ${values})
      select asked.i as i, (select e.p from event_prefix e where e.workspace_id = ${workspaceId} and e.key = asked.k and e.minute >= asked.lo and e.minute <= asked.hi order by e.minute desc limit 1) as p
      from asked`.execute(db);
    for (const r of rows) out[Number(r.i)] = Number(r.p ?? 0);
  }
  return out;
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

/** A closed minute a boundary cuts between points `point` and `point + 1`: `read` is the smaller part, counted from the events; the rest is the minute's count less it. */
export interface CutMinute {
  minute: number;
  /** The part read from the events, (a, z], in the point `readPoint`. */
  read: Seconds;
  readPoint: number;
  otherPoint: number;
}

/**
 * The minutes the boundaries between points cut that are counted (first..last of the plan): each
 * read from its events on its smaller side only, the other side being the minute's count less
 * it; `raw` is the plan's spans without those minutes. A 30-day series of 96 points read 97 whole
 * minutes of events at its boundaries (2,000 events in bench/growth.ts), a quarter of it now.
 */
export function splitCutMinutes(b: Buckets, plan: CountPlan): { raw: Seconds[]; cuts: CutMinute[] } {
  const cuts: CutMinute[] = [];
  if (plan.minutes) {
    for (let i = 0; i + 1 < b.count; i++) {
      const s = b.from + (i + 1) * b.step;
      const m = Math.floor(s / 60);
      if (s % 60 === 0 || m < plan.minutes.first || m > plan.minutes.last) continue;
      // The minute lies in these two points only.
      if (minuteStart(m) < b.from + i * b.step || minuteStart(m + 1) > s + b.step) continue;
      const left = s - minuteStart(m) <= 30;
      cuts.push({ minute: m, read: left ? [minuteStart(m), s] : [s, minuteStart(m + 1)], readPoint: left ? i : i + 1, otherPoint: left ? i + 1 : i });
    }
  }
  const raw: Seconds[] = [];
  let k = 0;
  for (const [a0, z] of plan.raw) {
    let a = a0;
    while (k < cuts.length && minuteStart(cuts[k]!.minute + 1) <= a) k++;
    for (let j = k; j < cuts.length && minuteStart(cuts[j]!.minute) < z; j++) {
      const ms = minuteStart(cuts[j]!.minute);
      if (ms > a) raw.push([a, ms]);
      a = Math.max(a, ms + 60);
    }
    if (z > a) raw.push([a, z]);
  }
  return { raw, cuts };
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
 * minutes between could be years of them), its old rows left to the retention purge. A span
 * starts at the start of a day (event_prefix sums each day from its start), so a piece is the
 * day of `last` up to it, the minutes after the span, or the whole day before it.
 */
export function nextPiece(span: { first: number; last: number } | undefined, first: number, last: number): { first: number; last: number; spanFirst: number; spanLast: number; fresh: boolean } | null {
  const empty = !span || span.last < span.first || span.last < first - 1 || span.first > last + 1;
  if (empty) {
    const from = dayOf(last);
    return { first: from, last, spanFirst: from, spanLast: last, fresh: true };
  }
  if (last > span.last) {
    const to = Math.min(last, span.last + DAY);
    return { first: span.last + 1, last: to, spanFirst: span.first, spanLast: to, fresh: false };
  }
  if (first < span.first) {
    const from = dayOf(span.first - 1);
    return { first: from, last: span.first - 1, spanFirst: from, spanLast: span.last, fresh: false };
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
   * Adds to `out` the counted minutes of each point of `b` (those wholly in its step, up to
   * `lastClosed`, which must be counted): each day's part of a point is the difference of two
   * prefix sums of event_prefix, two searches whatever the events; a filter it does not keep
   * sums every minute of event_counts.
   */
  async addCounted(db: Kysely<DB>, workspaceId: string, b: Buckets, lastClosed: number, f: EventFilter, out: number[]): Promise<void> {
    const key = countKeyOf(f);
    const plan = planCounts(b, lastClosed);
    if (!plan.minutes) return;
    if (key === null) {
      for (const { minute, n } of await this.counted(db, workspaceId, plan.minutes.first, plan.minutes.last, f)) {
        // A minute a boundary cuts is counted from its events, not here.
        const i = pointOfMinute(b, minute);
        if (i >= 0) out[i]! += n;
      }
      return;
    }
    if (key === NOTHING) return;
    const lookups: Lookup[] = [];
    const index = new Map<number, number>();
    const ask = (at: number) => {
      let i = index.get(at);
      if (i === undefined) {
        i = lookups.push({ key, at }) - 1;
        index.set(at, i);
      }
      return i;
    };
    // Each point: + the prefix at the last minute of each of its days, - the one before its first minute when that is not a day's start.
    const terms: { point: number; lookup: number; sign: 1 | -1 }[] = [];
    for (let i = 0; i < b.count; i++) {
      const start = b.from + i * b.step;
      const lo = Math.ceil(start / 60);
      const hi = Math.min(Math.floor((start + b.step) / 60) - 1, lastClosed);
      if (lo > hi) continue;
      for (let d = dayOf(lo); d <= hi; d += DAY) {
        terms.push({ point: i, lookup: ask(Math.min(hi, d + DAY - 1)), sign: 1 });
        if (lo > d) terms.push({ point: i, lookup: ask(lo - 1), sign: -1 });
      }
    }
    const p = await prefixes(db, workspaceId, lookups);
    for (const t of terms) out[t.point]! += t.sign * p[t.lookup]!;
  },

  /**
   * Adds to `out` the cut minutes of `cuts` (splitCutMinutes): the part read from its events to
   * its point, the minute's count (two day sums) less it to the other. Only for a filter
   * event_prefix keeps; the minutes must be counted.
   */
  async addCuts(db: Kysely<DB>, engine: Engine, workspaceId: string, cuts: CutMinute[], f: EventFilter, out: number[]): Promise<void> {
    const key = countKeyOf(f);
    if (key === NOTHING || !cuts.length) return;
    if (key === null) throw new Error('cut minutes are counted only for a filter event_prefix keeps');
    const lookups: Lookup[] = cuts.flatMap((c) => [{ key, at: c.minute }, ...(c.minute > dayOf(c.minute) ? [{ key, at: c.minute - 1 }] : [])]);
    const p = await prefixes(db, workspaceId, lookups);
    const read: number[] = [];
    for (let i = 0; i < cuts.length; i += SPANS_PER_STATEMENT) {
      const chunk = cuts.slice(i, i + SPANS_PER_STATEMENT);
      const arms = chunk.map((c, j) => narrow(eventsIn(db, engine, workspaceId, c.read), f).select([sql<number>`${sql.lit(i + j)}`.as('k'), 'created_at']));
      const union = arms.slice(1).reduce((u, arm) => u.unionAll(arm), arms[0]!);
      const rows = await db
        .selectFrom(union.as('e'))
        .select(['k', sql<number>`count(*)`.as('n')])
        .groupBy('k')
        .execute();
      for (const r of rows) read[Number(r.k)] = Number(r.n);
    }
    let at = 0;
    cuts.forEach((c, i) => {
      const total = p[at]! - (c.minute > dayOf(c.minute) ? p[at + 1]! : 0);
      at += c.minute > dayOf(c.minute) ? 2 : 1;
      const part = read[i] ?? 0;
      out[c.readPoint]! += part;
      out[c.otherPoint]! += total - part;
    });
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
        // event_prefix sums each day of the span from its start: a span started afresh starts
        // them afresh, and minutes added after a span's last go on from its day's last sums.
        if (piece.fresh) await trx.deleteFrom('event_prefix').where('workspace_id', '=', workspaceId).execute();
        const byKey = new Map<string, Map<number, number>>();
        for (const v of values) {
          for (const key of countKeysOf(v.type, v.resource_type)) {
            const minutes = byKey.get(key) ?? new Map<number, number>();
            minutes.set(v.minute, (minutes.get(v.minute) ?? 0) + v.n);
            byKey.set(key, minutes);
          }
        }
        const keys = [...byKey.keys()];
        const base =
          piece.first > dayOf(piece.first)
            ? await prefixes(
                trx,
                workspaceId,
                keys.map((key) => ({ key, at: piece.first - 1 })),
              )
            : keys.map(() => 0);
        const sums: { workspace_id: string; key: string; minute: number; p: number }[] = [];
        keys.forEach((key, k) => {
          let day = dayOf(piece.first);
          let p = base[k]!;
          for (const [minute, n] of [...byKey.get(key)!].sort((x, y) => x[0] - y[0])) {
            if (dayOf(minute) !== day) {
              day = dayOf(minute);
              p = 0;
            }
            p += n;
            sums.push({ workspace_id: workspaceId, key, minute, p });
          }
        });
        for (let i = 0; i < sums.length; i += ROWS_PER_INSERT) {
          await trx
            .insertInto('event_prefix')
            .values(sums.slice(i, i + ROWS_PER_INSERT))
            .onConflict((oc) => oc.columns(['workspace_id', 'key', 'minute']).doUpdateSet({ p: (eb) => eb.ref('excluded.p') }))
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
    // Spans start again at the next whole day: event_prefix sums each day from its start.
    const first = Math.ceil((lastTouched + 1) / DAY) * DAY;
    await db.deleteFrom('event_counts').where('minute', '<', first).execute();
    await db.deleteFrom('event_prefix').where('minute', '<', first).execute();
    await db.updateTable('event_count_spans').set({ first_minute: first }).where('first_minute', '<', first).execute();
  },
};
