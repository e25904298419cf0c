import type { Kysely } from 'kysely';

/**
 * Issue 50, point 6 (docs/spec-gaps.md, "Webhooks": "Each attempt's request and response"): one
 * row per HTTP attempt a delivery's sender makes, written in the transaction that records the
 * attempt's outcome on the delivery. Numbered per delivery from 1 (the key: the list's keyset,
 * oldest first); the URL as it was then (an endpoint's URL may change later), the headers sent,
 * what came back (status, headers, the start of the body: bounded by src/webhooks/sender.ts) or
 * the error of an attempt that got no answer. The body sent is not copied: it is the delivery's
 * own, fixed when its event was recorded. Attempts go with their delivery (the cascade), which
 * goes with its endpoint.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('request_headers', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_headers', 'text')
    .addColumn('response_headers_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('response_body', 'text')
    .addColumn('response_body_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('webhook_delivery_attempts_pk', ['delivery_id', 'number'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
