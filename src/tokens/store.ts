import type { Kysely } from 'kysely';
import type { ApiTokensTable } from './tables.js';
import type { DB } from '../db/tables.js';
import { jsonObject, preparedJsonPage, type JsonField } from '../db/json-rows.js';
import { credentialByHash } from '../db/credential-rows.js';
import type { JsonPageRow } from '../shared/cursor.js';
import { TOKEN_SCOPES } from '../auth/scope-schemas.js';
import type { ListedToken } from './schemas.js';

const LISTED = ['id', 'name', 'prefix', 'expires_at', 'created_at', 'created_by', 'last_used_at', 'scopes'] as const;

/** ListedToken as the database writes it: a token made without `scopes` holds them all. */
const LISTED_JSON: Record<keyof ListedToken, JsonField> = {
  id: { value: 'id' },
  name: { value: 'name' },
  prefix: { value: 'prefix' },
  expires_at: { value: 'expires_at' },
  created_at: { value: 'created_at' },
  created_by: { value: 'created_by' },
  last_used_at: { value: 'last_used_at' },
  scopes: { words: 'scopes', whenNull: TOKEN_SCOPES },
};

/** The name of a workspace's token list in list_versions (migration 0018's triggers write it). */
export const TOKEN_LIST_PREFIX = 'api_tokens:';
export const tokenListName = (workspaceId: string) => TOKEN_LIST_PREFIX + workspaceId;

// A statement per shape, compiled once (src/db/json-rows.ts): the first page, and a page after a cursor.
const listed = (db: Kysely<DB>, workspaceId: string) =>
  db
    .selectFrom('api_tokens')
    .select(['id', jsonObject(db, LISTED_JSON).as('json')])
    .where('workspace_id', '=', workspaceId);
const firstPage = preparedJsonPage((db, workspaceId: string, take: number) => listed(db, workspaceId).orderBy('id', 'desc').limit(take));
const pageAfter = preparedJsonPage((db, workspaceId: string, beforeId: string, take: number) => listed(db, workspaceId).where('id', '<', beforeId).orderBy('id', 'desc').limit(take));

export const tokenStore = {
  insert: (db: Kysely<DB>, row: ApiTokensTable) => db.insertInto('api_tokens').values(row).execute(),

  /** Every request with an API token runs one of these, alone or with its workspace's list's version. */
  ...credentialByHash((db) => db.selectFrom('api_tokens').select(['id', 'workspace_id', 'expires_at', 'last_used_at', 'scopes']), 'api_tokens.workspace_id'),

  touch: (db: Kysely<DB>, id: string, now: number) => db.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', id).execute(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`: `take` rows at most, as one JSON page row. */
  page: (db: Kysely<DB>, workspaceId: string, take: number, beforeId: string | null): Promise<JsonPageRow> => {
    const list = tokenListName(workspaceId);
    return beforeId ? pageAfter(db, list, take, workspaceId, beforeId) : firstPage(db, list, take, workspaceId);
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

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('api_tokens').select(LISTED).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  delete: async (db: Kysely<DB>, workspaceId: string, id: string): Promise<boolean> => {
    const res = await db.deleteFrom('api_tokens').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },
};
