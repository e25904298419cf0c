import type { Kysely } from 'kysely';

/**
 * Each claim of an Idempotency-Key gets a random token, and only its holder may complete or
 * release it: a request whose claim was taken over (after the lease, as if its server had died)
 * can no longer overwrite or delete the row of the request that took it over. Rows from before
 * have none (null); they are done, or their claim is long expired and is taken over as usual.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('claim_token', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
