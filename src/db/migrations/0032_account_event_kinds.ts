import type { Kysely } from 'kysely';

/**
 * Issue 54.4 (docs/decisions.md, "A person's log: one search per kind of event"): a person's own
 * events (no workspace's, GET /v1/me/events) were searched through (actor_id, id) and
 * (resource_id, id) with `type in (<the account types>)` beside. On PostgreSQL a type filter or a
 * later page then read every event of the person (or every person's sign-ins of that type) and
 * sorted them (2,000 sign-ins: 13-22 ms where a person with none took 2-4). src/audit/store.ts now
 * searches each kind of event on its own, one type or one resource type, an equality: these
 * indexes give each search its page in id order. They replace 0029's two, which no search uses now.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['actor_id', 'resource_id']) {
    const who = column.replace('_id', '');
    await db.schema.dropIndex(`events_account_${who}`).execute();
    for (const kind of ['type', 'resource_type']) {
      await db.schema.createIndex(`events_account_${who}_by_${kind}`).on('events').columns([column, kind, 'id']).where('workspace_id', 'is', null).execute();
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
