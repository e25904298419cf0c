import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { idFloor } from '../shared/ids.js';
import type { Engine } from '../db/database.js';
import { bucketed, lastClosedMinute, minuteCountsStore, planCounts, pointOfMinute, type Buckets, type EventFilter } from '../events/minute-counts.js';

export type { Buckets };

/** A span of time something was in a state: [start, end), end null while it still is. */
export interface Interval {
  start: number;
  end: number | null;
  /** What it adds at each point it holds (1 unless said). */
  weight?: number;
}

const last = (b: Buckets) => b.from + b.count * b.step;

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
    let q = db
      .selectFrom('renders')
      .select([bucketed(b).as('b'), sql<number>`count(*)`.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>', b.from)
      .where('created_at', '<=', last(b));
    if (f.install) q = q.where('install_id', '=', f.install);
    if (f.status) q = q.where('state', '=', f.status as never);
    return counts(q.groupBy('b').execute(), b);
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
    if (plan.minutes) {
      for (const { minute, n } of await minuteCountsStore.counted(db, workspaceId, plan.minutes.first, plan.minutes.last, f)) {
        // A minute a boundary cuts is counted from its events (plan.raw), not here.
        const i = pointOfMinute(b, minute);
        if (i >= 0) out[i]! += n;
      }
    }
    await minuteCountsStore.countRaw(db, engine, workspaceId, b, plan.raw, f, out);
    return out;
  },

  /**
   * The lives of the workspace's machines that overlap (from, until]: each from its row (while it
   * exists) or from the event log (machines deleted since): created at its row's or its
   * `machine.created` event's time, ended by `machine.deleted`, or when its row went to failed or
   * expired. Only what can hold a point of the range is read: rows not ended before `from`, the
   * deletions since `from` (and those of machines whose rows remain), and the creations of the
   * machines deleted since `from`; a workspace's older history costs nothing (it made each series
   * slower by the hour under the soak: every machine event since the workspace began was read).
   */
  async machineLives(db: Kysely<DB>, workspaceId: string, from: number, until: number, cluster: string | undefined): Promise<Interval[]> {
    let rows = db
      .selectFrom('machines')
      .select(['id', 'created_at', 'updated_at', 'status', 'cluster_id'])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb('status', 'not in', ['failed', 'expired']), eb('updated_at', '>', from)]));
    if (cluster) rows = rows.where('cluster_id', '=', cluster);
    const machineIds = db.selectFrom('machines').select('id').where('workspace_id', '=', workspaceId);
    const since = idFloor('evt', (from - 1) * 1000);
    const deletedSince = db
      .selectFrom('events')
      .select('resource_id')
      .where('workspace_id', '=', workspaceId)
      .where('type', '=', 'machine.deleted')
      .where('id', '>=', since)
      .where('created_at', '>', from);
    const deletions = await db
      .selectFrom('events')
      .select(['resource_id', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .where('type', '=', 'machine.deleted')
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb.and([eb('id', '>=', since), eb('created_at', '>', from)]), eb('resource_id', 'in', machineIds)]))
      .orderBy('id')
      .execute();
    const creations = await db
      .selectFrom('events')
      .select(['resource_id', 'created_at', 'data'])
      .where('workspace_id', '=', workspaceId)
      .where('type', '=', 'machine.created')
      .where('created_at', '<=', until)
      .where('resource_id', 'in', deletedSince)
      .where('resource_id', 'not in', machineIds)
      .execute();
    const lives = new Map<string, Interval & { cluster: string | null }>();
    for (const m of await rows.execute()) {
      const ended = m.status === 'failed' || m.status === 'expired' ? m.updated_at : null;
      lives.set(m.id, { start: m.created_at, end: ended, cluster: m.cluster_id });
    }
    // Events add the machines deleted since, and the end of those being deleted now.
    for (const e of creations) {
      if (lives.has(e.resource_id!)) continue;
      const data = JSON.parse(e.data) as { cluster_id?: string };
      lives.set(e.resource_id!, { start: e.created_at, end: null, cluster: data.cluster_id ?? null });
    }
    for (const e of deletions) {
      const life = lives.get(e.resource_id!);
      if (life) life.end = e.created_at;
    }
    // A machine known only from its events is counted when its cluster is asked for only if the event named it.
    return [...lives.values()].filter((l) => (!cluster || l.cluster === cluster) && (l.end === null || l.end > from));
  },

  /** Suspensions that overlap (from, until], as intervals: from when the machine was suspended until it was resumed, expired or deleted. */
  async suspensions(db: Kysely<DB>, workspaceId: string, from: number, until: number, cluster: string | undefined): Promise<Interval[]> {
    let q = db
      .selectFrom('compute_suspensions')
      .select(['created_at', 'ended_at', 'monthly_cost_cents'])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', from)]));
    if (cluster) q = q.where('cluster_id', '=', cluster);
    return (await q.execute()).map((s) => ({ start: s.created_at, end: s.ended_at, weight: Number(s.monthly_cost_cents) }));
  },

  /** The caller's notifications unread at some time in (from, until], as intervals: from arrival until read. */
  async unread(db: Kysely<DB>, userId: string, from: number, until: number): Promise<Interval[]> {
    const rows = await db
      .selectFrom('notifications')
      .select(['created_at', 'read_at'])
      .where('user_id', '=', userId)
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb('read_at', 'is', null), eb('read_at', '>', from)]))
      .execute();
    return rows.map((n) => ({ start: n.created_at, end: n.read_at }));
  },
};
