import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { idFloor } from '../shared/ids.js';
import { EVENT_TYPE_NAMES, resourceTypeOf, type EventType } from '../events/event-type-schemas.js';

export interface AuditFilter {
  type?: string | undefined;
  actorId?: string | undefined;
  resourceId?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
}

/**
 * A time filter as a range of ids too: an event's id is made at its `created_at` (src/events/
 * record.ts), so the index that serves the page's order (workspace_id, [column,] id) starts and
 * stops at the range's ends. On `created_at` alone it read from the newest event back to the
 * range: every event newer than `until` before the first of the page (1.26 s at 10^6 events,
 * bench/growth.ts), and every event older than `since` after a range's last page. The second of
 * slack each side takes in events written before ids and times came from one reading (a moment
 * apart); the `created_at` conditions, kept, make the answer exact.
 */
const sinceId = (since: number) => idFloor('evt', (since - 1) * 1000);
const untilId = (until: number) => idFloor('evt', (until + 1) * 1000);

/** One search of a person's log: the events of one type, or of one resource type. */
interface Kind {
  column: 'type' | 'resource_type';
  value: string;
}

/**
 * The searches that together read exactly the events of `types` under the filter (a type, or
 * `<resource>.*`): a resource all of whose types are among them by its resource type, any other
 * type by itself.
 */
function kindsOf(types: readonly string[], filter: string | undefined): Kind[] {
  const wanted = new Set(types);
  const resource = filter?.endsWith('.*') ? filter.slice(0, -2) : undefined;
  const kept = filter === undefined ? types : resource !== undefined ? types.filter((t) => resourceTypeOf(t as EventType) === resource) : types.filter((t) => t === filter);
  const kinds: Kind[] = [];
  const done = new Set<string>();
  for (const t of kept) {
    const r = resourceTypeOf(t as EventType);
    if (done.has(r)) continue;
    if (EVENT_TYPE_NAMES.filter((x) => resourceTypeOf(x) === r).every((x) => wanted.has(x)) && (filter === undefined || resource !== undefined)) {
      done.add(r);
      kinds.push({ column: 'resource_type', value: r });
    } else kinds.push({ column: 'type', value: t });
  }
  return kinds;
}

export const auditStore = {
  /** Newest first by id (time-ordered), keyset before `beforeId`; each filter is served by an index on (workspace_id, column, id). */
  page(db: Kysely<DB>, workspaceId: string, f: AuditFilter, take: number, beforeId: string | null) {
    let q = db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId);
    if (f.type?.endsWith('.*')) q = q.where('resource_type', '=', f.type.slice(0, -2));
    else if (f.type) q = q.where('type', '=', f.type);
    if (f.actorId) q = q.where('actor_id', '=', f.actorId);
    if (f.resourceId) q = q.where('resource_id', '=', f.resourceId);
    if (f.since !== undefined) q = q.where('created_at', '>=', f.since).where('id', '>=', sinceId(f.since));
    if (f.until !== undefined) q = q.where('created_at', '<', f.until).where('id', '<', untilId(f.until));
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(take).execute();
  },

  /**
   * A person's own events of no workspace, newest first: those they did (signed in, approved a
   * device) and those about them (a failed sign-in naming their account, their address released).
   */
  pageOfUser(db: Kysely<DB>, userId: string, types: readonly string[], f: AuditFilter, take: number, beforeId: string | null) {
    // Searches, each a page in the order of its own index (0032: (actor_id, <kind>, id) and
    // (resource_id, <kind>, id) of the events of no workspace, <kind> a type or a resource type),
    // merged: one `actor_id = ? OR resource_id = ?` could be answered only by reading every event
    // of no workspace (every person's sign-ins) or by sorting every match (test/db/query-plans.test.ts).
    // The resource's searches leave out what the actor's find, so an event by and about the person
    // comes once. Each search names one type or one resource type, never a list (`type in (...)`):
    // PostgreSQL reads an index in its order only under equalities, and it priced a list of the
    // account types, which every event of no workspace but a person's notices has, as one in
    // twenty events, so that it read and sorted all the person's events (bench/growth.ts).
    const kinds = kindsOf(types, f.type);
    if (kinds.length === 0) return Promise.resolve([]);
    const search = (column: 'actor_id' | 'resource_id', kind: Kind) => {
      let q = db.selectFrom('events').selectAll().where('workspace_id', 'is', null).where(column, '=', userId).where(kind.column, '=', kind.value);
      if (column === 'resource_id') q = q.where((eb) => eb.or([eb('actor_id', 'is', null), eb('actor_id', '!=', userId)]));
      if (f.since !== undefined) q = q.where('created_at', '>=', f.since).where('id', '>=', sinceId(f.since));
      if (f.until !== undefined) q = q.where('created_at', '<', f.until).where('id', '<', untilId(f.until));
      if (beforeId) q = q.where('id', '<', beforeId);
      return db.selectFrom(q.orderBy('id', 'desc').limit(take).as('s')).selectAll();
    };
    const [first, ...rest] = (['actor_id', 'resource_id'] as const).flatMap((column) => kinds.map((kind) => search(column, kind)));
    return db
      .selectFrom(rest.reduce((union, next) => union.unionAll(next), first!).as('e'))
      .selectAll()
      .orderBy('id', 'desc')
      .limit(take)
      .execute();
  },

  /** Deletes events older than `before`, a batch at a time (a year of them would hold a lock too long at once). */
  async purgeBatch(db: Kysely<DB>, before: number, batch: number): Promise<number> {
    const ids = db.selectFrom('events').select('id').where('created_at', '<', before).limit(batch);
    const res = await db.deleteFrom('events').where('id', 'in', ids).executeTakeFirst();
    return Number(res.numDeletedRows);
  },
};
