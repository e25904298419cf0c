/**
 * What the series read. This area owns no table: the rows of renders, machines, suspensions and
 * notifications are read through the functions their areas export for it (`metric-sources.ts`),
 * and the events through the machinery's counts (src/events/minute-counts.ts).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Engine } from '../db/database.js';
import { countKeyOf, lastClosedMinute, minuteCountsStore, planCounts, splitCutMinutes, type Buckets, type EventFilter } from '../events/minute-counts.js';
import { machinesAliveAt, suspensionSpans, type MachineScope } from '../compute/metric-sources.js';
import { renderCountsByBucket } from '../installs/metric-sources.js';
import { unreadSpans } from '../notifications/metric-sources.js';

export type { Buckets };

/** A span of time something was in a state: [start, end), end null while it still is. */
export interface Interval {
  start: number;
  end: number | null;
  /** What it adds at each point it holds (1 unless said). */
  weight?: number;
}

async function counts(rows: Promise<{ b: number | string; n: number | string | bigint }[]>, b: Buckets): Promise<number[]> {
  const out = new Array<number>(b.count).fill(0);
  for (const r of await rows) {
    const i = Number(r.b);
    if (i >= 0 && i < b.count) out[i] = Number(r.n);
  }
  return out;
}

/** A series of events: whose, over which buckets, which events, and the time it is asked at. */
export interface EventSeriesQuery {
  engine: Engine;
  workspaceId: string;
  buckets: Buckets;
  filter: EventFilter;
  /** What makes a minute closed (counted once) or still open (read from the events). */
  now: number;
  /** Counting closed minutes failed: the series reads the events instead, and says so here. */
  onCountingFailed?: (err: unknown) => void;
}

export const platformMetricsStore = {
  renders(db: Kysely<DB>, workspaceId: string, b: Buckets, f: { install?: string | undefined; status?: string | undefined }) {
    return counts(renderCountsByBucket(db, workspaceId, b, f), b);
  },

  /**
   * Events in the range, optionally of one type (exact) or one resource type (`<resource>.*`):
   * closed minutes from their counts (src/events/minute-counts.ts), the rest from the events.
   */
  async events(db: Kysely<DB>, { engine, workspaceId, buckets: b, filter: f, now, onCountingFailed = () => {} }: EventSeriesQuery): Promise<number[]> {
    const plan = planCounts(b, lastClosedMinute(now));
    const out = new Array<number>(b.count).fill(0);
    // Counting writes: on a disk that refuses them, or with more days missing than one series counts, this one reads the events.
    const counted =
      plan.minutes &&
      (await minuteCountsStore.ensureCounted(db, engine, workspaceId, plan.minutes.first, plan.minutes.last).catch((err: unknown) => {
        onCountingFailed(err);
        return false;
      }));
    if (plan.minutes && !counted) {
      plan.raw = [[b.from, b.from + b.count * b.step]];
      plan.minutes = null;
    }
    // Whole minutes counted ahead (as day sums); a minute a boundary cuts from its events, on its smaller side where it is counted.
    if (plan.minutes) await minuteCountsStore.addCounted(db, workspaceId, b, lastClosedMinute(now), f, out);
    const keyed = countKeyOf(f) !== null;
    const { raw, cuts } = keyed ? splitCutMinutes(b, plan) : { raw: plan.raw, cuts: [] };
    await minuteCountsStore.addCuts(db, engine, workspaceId, cuts, f, out);
    await minuteCountsStore.countRaw(db, engine, workspaceId, b, raw, f, out);
    return out;
  },

  /** How many of the workspace's machines were alive at each point (src/compute/machines/store.ts says how they are kept). */
  machinesAlive: (db: Kysely<DB>, workspaceId: string, b: Buckets, scope: MachineScope | string | undefined): Promise<number[]> =>
    machinesAliveAt(
      db,
      workspaceId,
      Array.from({ length: b.count }, (_, i) => b.from + (i + 1) * b.step),
      scope,
    ),

  /** Suspensions that overlap (from, until], as intervals: from when the machine was suspended until it was resumed, expired or deleted. */
  suspensions: (db: Kysely<DB>, workspaceId: string, from: number, until: number, scope: MachineScope | string | undefined): Promise<Interval[]> =>
    suspensionSpans(db, workspaceId, from, until, scope),

  /** The caller's notifications unread at some time in (from, until], as intervals: from arrival until read. */
  unread: (db: Kysely<DB>, userId: string, from: number, until: number): Promise<Interval[]> => unreadSpans(db, userId, from, until),
};
