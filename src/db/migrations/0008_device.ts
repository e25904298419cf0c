import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('device_authorizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // The device code is a bearer secret until redeemed: only its SHA-256 is kept.
    .addColumn('device_code_hash', 'text', (c) => c.notNull().unique())
    // Normalized (8 letters, no dash). Unique so that a typed code names one request at most.
    .addColumn('user_code', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('last_polled_ms', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('device_authorizations_expiry').on('device_authorizations').columns(['expires_at']).execute();

  // Failed user-code guesses per client IP and per user, in fixed windows: in the database so
  // that the limit holds across server instances.
  await db.schema
    .createTable('device_guess_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('device_guess_limits_window').on('device_guess_limits').columns(['window_start']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
