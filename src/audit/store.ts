import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';

export interface AuditFilter {
  type?: string | undefined;
  actorId?: string | undefined;
  resourceId?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
}

export const auditStore = {
  /** Newest first by id (time-ordered), keyset before `beforeId`; each filter is served by an index on (workspace_id, column, id). */
  page(db: Kysely<DB>, workspaceId: string, f: AuditFilter, take: number, beforeId: string | null) {
    let q = db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId);
    if (f.type?.endsWith('.*')) q = q.where('resource_type', '=', f.type.slice(0, -2));
    else if (f.type) q = q.where('type', '=', f.type);
    if (f.actorId) q = q.where('actor_id', '=', f.actorId);
    if (f.resourceId) q = q.where('resource_id', '=', f.resourceId);
    if (f.since !== undefined) q = q.where('created_at', '>=', f.since);
    if (f.until !== undefined) q = q.where('created_at', '<', f.until);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(take).execute();
  },

  /**
   * A person's own events of no workspace, newest first: those they did (signed in, approved a
   * device) and those about them (a failed sign-in naming their account, their address released).
   */
  pageOfUser(db: Kysely<DB>, userId: string, types: readonly string[], f: AuditFilter, take: number, beforeId: string | null) {
    // Two searches, each a page in the order of its own index (0029: (actor_id, id) and
    // (resource_id, id) of the events of no workspace), merged: one `actor_id = ? OR resource_id = ?`
    // could be answered only by reading every event of no workspace (every person's sign-ins) or
    // by sorting every match (test/db/query-plans.test.ts). The second leaves out what the first
    // finds, so an event by and about the person comes once.
    const search = (column: 'actor_id' | 'resource_id') => {
      let q = db.selectFrom('events').selectAll().where('workspace_id', 'is', null).where(column, '=', userId).where('type', 'in', types);
      if (column === 'resource_id') q = q.where((eb) => eb.or([eb('actor_id', 'is', null), eb('actor_id', '!=', userId)]));
      if (f.type?.endsWith('.*')) q = q.where('resource_type', '=', f.type.slice(0, -2));
      else if (f.type) q = q.where('type', '=', f.type);
      if (f.since !== undefined) q = q.where('created_at', '>=', f.since);
      if (f.until !== undefined) q = q.where('created_at', '<', f.until);
      if (beforeId) q = q.where('id', '<', beforeId);
      return db.selectFrom(q.orderBy('id', 'desc').limit(take).as('s')).selectAll();
    };
    return db
      .selectFrom(search('actor_id').unionAll(search('resource_id')).as('e'))
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
