import type { Kysely } from 'kysely';

/**
 * Token scopes (docs/spec-gaps.md, "Token scopes"): what a workspace API token may do, as a space-separated list of
 * scopes; null (every token made before, and one made without `scopes`) holds them all.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_tokens').addColumn('scopes', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
