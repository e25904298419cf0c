import type { Kysely } from 'kysely';

/**
 * Issue 54.4 (docs/decisions.md, "Every read through an index"): the audit log's `<resource>.*`
 * filter (`resource_type = ?`) had no index of its own. It was read through (workspace_id, id),
 * every event of the workspace from the newest back until a page of that resource's was found:
 * for a resource with few events, every event of the workspace (bench/growth.ts, 10^6 of them).
 * With this index a page reads its own rows and stops, as the other filters' pages do.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_workspace_resource_type').on('events').columns(['workspace_id', 'resource_type', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
