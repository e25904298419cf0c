import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';

/**
 * Quotas and disk (issue 15): a render no longer stores its values again. Each distinct set of
 * an install's values is kept once in `render_values`, under the SHA-256 of its stored JSON, and
 * a render names it; the install's repository size, measured after each render and each
 * repository maintenance, is kept for the quota figures; renders are counted per workspace and
 * hour from an index.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('render_values')
    .addColumn('install_id', 'text', (c) => c.notNull().references('installs.id').onDelete('cascade'))
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('values_json', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('render_values_pk', ['install_id', 'digest'])
    .execute();
  await db.schema
    .alterTable('renders')
    .addColumn('values_digest', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  for (;;) {
    const batch = await db.selectFrom('renders').select(['id', 'install_id', 'values_json']).where('values_digest', '=', '').orderBy('id').limit(500).execute();
    if (batch.length === 0) break;
    for (const r of batch as { id: string; install_id: string; values_json: string }[]) {
      const digest = createHash('sha256').update(r.values_json).digest('hex');
      await db
        .insertInto('render_values')
        .values({ install_id: r.install_id, digest, values_json: r.values_json })
        .onConflict((oc) => oc.columns(['install_id', 'digest']).doNothing())
        .execute();
      await db.updateTable('renders').set({ values_digest: digest }).where('id', '=', r.id).execute();
    }
  }
  await db.schema.alterTable('renders').dropColumn('values_json').execute();
  await db.schema.createIndex('renders_workspace_created').on('renders').columns(['workspace_id', 'created_at']).execute();
  await db.schema.alterTable('installs').addColumn('repository_bytes', 'bigint').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
