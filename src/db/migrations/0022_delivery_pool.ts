import type { Kysely } from 'kysely';

/**
 * Webhook deliveries that cannot starve other work (issue 48, item 2):
 * - `jobs.group_key`: whom a job is done for (a delivery's workspace), so a job pool's claim can
 *   skip the groups holding their share of its slots (src/jobs/runner.ts, `JobPool.perGroup`);
 * - `webhooks.circuit_failures` and `circuit_open_until`: the endpoint's circuit breaker, its
 *   consecutive timeouts and connection failures and, once open, until when its deliveries wait
 *   (src/webhooks/circuit.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('group_key', 'text').execute();
  await db.schema
    .alterTable('webhooks')
    .addColumn('circuit_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('webhooks').addColumn('circuit_open_until', 'bigint').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
