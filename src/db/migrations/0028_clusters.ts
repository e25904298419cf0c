import type { Kysely } from 'kysely';
import { randomBytes } from 'node:crypto';

/**
 * Issue 52 (docs/spec-gaps.md, "Clusters and regions"): clusters become a
 * resource. Each existing cluster (only the workspaces' default ones exist before this) keeps its
 * id, name and machines; it gains a `description` (null), a `region` (null: the default cluster
 * takes machines of any region), an etag and `updated_at` (its creation time). Names are unique
 * in a workspace: before this only one cluster per workspace could exist, so no two collide.
 * Installs gain `cluster_id` (null: placed on no cluster).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clusters').addColumn('description', 'text').execute();
  await db.schema.alterTable('clusters').addColumn('region', 'text').execute();
  await db.schema
    .alterTable('clusters')
    .addColumn('etag', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('clusters')
    .addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  // Each existing cluster its own etag, as src/shared/etag.ts makes them (base64url of 12 bytes).
  const rows = (await db.selectFrom('clusters').select(['id', 'created_at']).execute()) as { id: string; created_at: number | string }[];
  for (const { id, created_at } of rows) {
    await db
      .updateTable('clusters')
      .set({ etag: randomBytes(12).toString('base64url'), updated_at: Number(created_at) })
      .where('id', '=', id)
      .execute();
  }
  await db.schema.createIndex('clusters_name').on('clusters').columns(['workspace_id', 'name']).unique().execute();
  await db.schema.createIndex('machines_cluster').on('machines').columns(['cluster_id', 'id']).execute();

  await db.schema.alterTable('installs').addColumn('cluster_id', 'text').execute();
  await db.schema.createIndex('installs_cluster').on('installs').columns(['cluster_id', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
