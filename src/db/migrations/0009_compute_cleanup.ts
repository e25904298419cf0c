import { sql, type Kysely } from 'kysely';

/**
 * Compute: a machine job that gave up keeps what it still has to put right at the provider
 * (`cleanup`, JSON) until the provider confirms; expired machines whose snapshot is still
 * recorded are found by the expiry scan, which queues the deletion again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('machines').addColumn('cleanup', 'text').execute();
  await db.schema
    .createIndex('machines_snapshot_left')
    .on('machines')
    .column('status')
    .where(sql<boolean>`snapshot_id is not null`)
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
