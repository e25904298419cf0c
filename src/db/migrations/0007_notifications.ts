import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('read_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // "Each once" is this unique key, so it holds across server instances and job retries.
    .addColumn('dedupe_key', 'text', (c) => c.unique())
    .execute();
  await db.schema.createIndex('notifications_user').on('notifications').columns(['user_id', 'id']).execute();
  // The `unread=true` page stays a short index range however many read ones a user has.
  await db.schema.createIndex('notifications_user_unread').on('notifications').columns(['user_id', 'id']).where(sql.ref('read_at'), 'is', null).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
