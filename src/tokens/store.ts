import type { Kysely } from 'kysely';
import type { ApiTokensTable, DB } from '../db/tables.js';
import { prepared } from '../db/prepared.js';

const LISTED = ['id', 'name', 'prefix', 'expires_at', 'created_at', 'created_by', 'last_used_at', 'scopes'] as const;

export const tokenStore = {
  insert: (db: Kysely<DB>, row: ApiTokensTable) => db.insertInto('api_tokens').values(row).execute(),

  /** Every request with an API token runs this: compiled once (prepared.ts). */
  byHash: prepared((db, tokenHash: string) => db.selectFrom('api_tokens').select(['id', 'workspace_id', 'expires_at', 'last_used_at', 'scopes']).where('token_hash', '=', tokenHash)).first,

  touch: (db: Kysely<DB>, id: string, now: number) =>
    db.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', id).execute(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('api_tokens').select(LISTED).where('workspace_id', '=', workspaceId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /** Tokens the workspace holds that still work: revoked ones are deleted, expired ones do not count. */
  countLive: async (db: Kysely<DB>, workspaceId: string, now: number): Promise<number> => {
    const row = await db
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  get: (db: Kysely<DB>, workspaceId: string, id: string) =>
    db.selectFrom('api_tokens').select(LISTED).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  delete: async (db: Kysely<DB>, workspaceId: string, id: string): Promise<boolean> => {
    const res = await db.deleteFrom('api_tokens').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },
};
