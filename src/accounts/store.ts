import type { Kysely } from 'kysely';
import type { DB, InvitationsTable } from '../db/tables.js';

const LISTED = ['id', 'email', 'role', 'expires_at', 'created_at', 'created_by'] as const;

export const invitationStore = {
  insert: (db: Kysely<DB>, row: InvitationsTable) => db.insertInto('invitations').values(row).execute(),

  /** Pending ones: not accepted, not revoked, not expired; newest first, keyset below `beforeId`. */
  pending: (db: Kysely<DB>, workspaceId: string, now: number, limit: number, beforeId: string | null) => {
    let q = db
      .selectFrom('invitations')
      .select(LISTED)
      .where('workspace_id', '=', workspaceId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  revoke: async (db: Kysely<DB>, workspaceId: string, id: string, now: number): Promise<boolean> => {
    const res = await db
      .updateTable('invitations')
      .set({ revoked_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  byHash: (db: Kysely<DB>, tokenHash: string) => db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst(),

  /** Marks it used if it still can be: false when it was used, revoked or expired meanwhile. */
  use: async (db: Kysely<DB>, id: string, userId: string, now: number): Promise<boolean> => {
    const res = await db
      .updateTable('invitations')
      .set({ accepted_at: now, accepted_by: userId })
      .where('id', '=', id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Whether someone invited this email and the invitation is still pending (single sign-on lets them in). */
  pendingFor: async (db: Kysely<DB>, emailKey: string, now: number): Promise<boolean> =>
    (await db
      .selectFrom('invitations')
      .select('id')
      .where('email_key', '=', emailKey)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst()) !== undefined,
};
