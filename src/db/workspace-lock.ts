import { sql, type Kysely } from 'kysely';
import type { DB } from './tables.js';

/**
 * Serializes the transactions that count a workspace's things and then add or change one (its
 * owners, its quotas of API tokens and webhooks): call it first in the transaction. On
 * PostgreSQL an UPDATE that changes nothing takes the workspace row's lock until the transaction
 * ends, so a second counter waits and then counts the first one's row; SQLite's transactions
 * hold its one write lock already (BEGIN IMMEDIATE). Without it, READ COMMITTED lets two
 * transactions each count the other's row as absent and both pass a quota by one.
 * Returns whether the workspace exists.
 */
export async function lockWorkspace(db: Kysely<DB>, workspaceId: string): Promise<boolean> {
  const res = await db.updateTable('workspaces').set({ etag: sql`etag` }).where('id', '=', workspaceId).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
