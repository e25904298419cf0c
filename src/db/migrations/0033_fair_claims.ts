import type { Kysely } from 'kysely';

/**
 * Issue 54.2 (docs/decisions.md, "Fair claims in a pool with a share"): `jobs.fair_key`, a job's
 * turn among its kind's grouped jobs (start-time fair queueing, src/jobs/store.ts): a pool with a
 * share per group claims the smallest, so each workspace's next job comes in turn instead of one
 * workspace's burst first. 0 for the jobs of no group and for those queued before this migration.
 * The indexes answer the two reads an insert makes (the kind's turn under way, the group's last
 * turn) and give the fair claim its order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('fair_key', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('jobs_fair_turn').on('jobs').columns(['kind', 'state', 'fair_key']).execute();
  await db.schema.createIndex('jobs_group_turn').on('jobs').columns(['group_key', 'kind', 'state', 'fair_key']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
