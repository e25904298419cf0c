import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { InvitationsTable } from './tables.js';

const LISTED = ['id', 'email', 'role', 'expires_at', 'created_at', 'created_by'] as const;

export const invitationStore = {
  insert: (db: Kysely<DB>, row: InvitationsTable) => db.insertInto('invitations').values(row).execute(),

  /** Pending ones: not accepted, not revoked, not expired; newest first, keyset below `beforeId`. */
  pending: (db: Kysely<DB>, workspaceId: string, now: number, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('invitations').select(LISTED).where('workspace_id', '=', workspaceId).where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now);
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

/**
 * The sign-in limits' rows (src/accounts/sign-in-limits.ts): per key, the finished failures of
 * the current fixed window and the places taken by password checks under way.
 */
export const signInLimitStore = {
  /**
   * Makes the key's row current: a new window once the last one ended (its failures no longer
   * count), and the places of checks nobody has renewed since `staleBefore` given back.
   */
  open: (db: Kysely<DB>, key: string, now: number, windowSeconds: number, staleBefore: number) => {
    const ended = sql<boolean>`sign_in_limits.window_start <= ${now - windowSeconds}`;
    return db
      .insertInto('sign_in_limits')
      .values({ key, window_start: now, failures: 0, in_flight: 0, flight_at: 0 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: sql<number>`case when ${ended} then 0 else sign_in_limits.failures end`,
          window_start: sql<number>`case when ${ended} then ${now} else sign_in_limits.window_start end`,
          in_flight: sql<number>`case when sign_in_limits.flight_at <= ${staleBefore} then 0 else sign_in_limits.in_flight end`,
        }),
      )
      .execute();
  },

  /**
   * Takes a place for one password check, if the failures so far and the checks under way leave
   * one under `limit`: one statement, so parallel attempts never take more places than there are.
   */
  take: async (db: Kysely<DB>, key: string, limit: number, now: number): Promise<boolean> => {
    const res = await db
      .updateTable('sign_in_limits')
      .set({ in_flight: sql<number>`in_flight + 1`, flight_at: now })
      .where('key', '=', key)
      .where(sql<boolean>`failures + in_flight < ${limit}`)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  get: (db: Kysely<DB>, key: string) => db.selectFrom('sign_in_limits').select(['failures', 'window_start', 'in_flight']).where('key', '=', key).executeTakeFirst(),

  /**
   * Gives a place back when its check is over, counting a failure when it failed (in a new window
   * if the last one ended meanwhile, and in a new row if the purge took the old one).
   */
  finish: (db: Kysely<DB>, key: string, failed: boolean, now: number, windowSeconds: number) => {
    const ended = sql<boolean>`sign_in_limits.window_start <= ${now - windowSeconds}`;
    const add = failed ? 1 : 0;
    return db
      .insertInto('sign_in_limits')
      .values({ key, window_start: now, failures: add, in_flight: 0, flight_at: 0 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: sql<number>`case when ${ended} then ${sql.lit(add)} else sign_in_limits.failures + ${sql.lit(add)} end`,
          window_start: sql<number>`case when ${ended} then ${now} else sign_in_limits.window_start end`,
          in_flight: sql<number>`case when sign_in_limits.in_flight > 0 then sign_in_limits.in_flight - 1 else 0 end`,
        }),
      )
      .execute();
  },
};
