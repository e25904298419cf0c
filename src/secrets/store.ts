import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { SecretsTable, SecretVersionsTable } from './tables.js';
import { forUpdate, ifEtag, type Engine } from '../db/database.js';
import { prepared, preparedInsert } from '../db/prepared.js';

/** A destroyed payload's pages leave the WAL within about a second of checkpoints busy elsewhere. */
const FLUSH_ATTEMPTS = 50;
const FLUSH_RETRY_MS = 20;
/**
 * A checkpoint answering busy within this time was refused at once (another connection held the
 * checkpoint lock): worth asking again. One answering later has waited, on a reader (up to the
 * busy timeout, 5 s) or for its turn on the connection, and is not asked again.
 */
const BUSY_AT_ONCE_MS = 20;

const SECRET_FIELDS = ['id', 'workspace_id', 'name', 'etag', 'created_at', 'updated_at'] as const;
/** Everything of a version but its payload: listing and reading never load ciphertext. */
const VERSION_FIELDS = ['id', 'secret_id', 'version_number', 'state', 'comment', 'etag', 'created_at', 'destroyed_at'] as const;

export type SecretRow = Pick<SecretsTable, (typeof SECRET_FIELDS)[number]>;
export type VersionRow = Pick<SecretVersionsTable, (typeof VERSION_FIELDS)[number]>;
export type VersionPatch = Pick<SecretVersionsTable, 'state' | 'etag'> & Partial<Pick<SecretVersionsTable, 'ciphertext' | 'destroyed_at'>>;

/** A secret's versions, each with its payload and the secret's wrapped data key. */
const versionsWithKey = (db: Kysely<DB>, workspaceId: string, secretId: string) =>
  db
    .selectFrom('secret_versions as v')
    .innerJoin('secrets as s', 's.id', 'v.secret_id')
    .select(['v.id', 'v.state', 'v.ciphertext', 's.id as secret_id', 's.key_id', 's.wrapped_key'])
    .where('v.workspace_id', '=', workspaceId)
    .where('v.secret_id', '=', secretId);

/** A version as `versionWithKey` and `newestEnabledWithKey` read it. */
export type VersionWithKey = NonNullable<Awaited<ReturnType<ReturnType<typeof versionsWithKey>['executeTakeFirst']>>>;

export const secretStore = {
  insertSecret: (db: Kysely<DB>, row: SecretsTable) => db.insertInto('secrets').values(row).execute(),

  getSecret: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('secrets').select(SECRET_FIELDS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  pageSecrets: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null, name?: string) => {
    let q = db.selectFrom('secrets').select(SECRET_FIELDS).where('workspace_id', '=', workspaceId);
    if (name !== undefined) q = q.where('name', '=', name);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /** Conditional delete: only while the etag is still `expected` (any etag for `*`). Versions go with it. */
  deleteSecret: async (db: Kysely<DB>, workspaceId: string, id: string, expected: string): Promise<boolean> => {
    const res = await db.deleteFrom('secrets').where('workspace_id', '=', workspaceId).where('id', '=', id).$call(ifEtag(expected)).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },

  /**
   * Gives out the next version number: the UPDATE takes the secret's row lock, so concurrent
   * adds are numbered one after another. Also a new etag for the secret (its versions changed).
   */
  claimVersionNumber: prepared((db, etag: string, now: number, workspaceId: string, id: string) =>
    db
      .updateTable('secrets')
      .set((eb) => ({ version_seq: eb('version_seq', '+', 1), etag, updated_at: now }))
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .returning(['id', 'version_seq', 'key_id', 'wrapped_key']),
  ).first,

  insertVersion: preparedInsert('secret_versions', ['id', 'workspace_id', 'secret_id', 'version_number', 'state', 'comment', 'etag', 'ciphertext', 'created_at', 'destroyed_at']),

  getVersion: (db: Kysely<DB>, workspaceId: string, secretId: string, id: string) =>
    db.selectFrom('secret_versions').select(VERSION_FIELDS).where('workspace_id', '=', workspaceId).where('secret_id', '=', secretId).where('id', '=', id).executeTakeFirst(),

  /** The version under a row lock, for a transition decided and written in one transaction. */
  lockVersion: (db: Kysely<DB>, engine: Engine, workspaceId: string, secretId: string, id: string) =>
    forUpdate(engine, db.selectFrom('secret_versions').select(VERSION_FIELDS).where('workspace_id', '=', workspaceId).where('secret_id', '=', secretId).where('id', '=', id)).executeTakeFirst(),

  /** Writes a transition, only if the version still has the etag it was decided on. */
  updateVersion: async (db: Kysely<DB>, id: string, expectedEtag: string, patch: VersionPatch): Promise<boolean> => {
    const res = await db.updateTable('secret_versions').set(patch).where('id', '=', id).where('etag', '=', expectedEtag).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Newest first, keyset below `beforeNumber`. */
  pageVersions: (db: Kysely<DB>, workspaceId: string, secretId: string, limit: number, beforeNumber: number | null) => {
    let q = db.selectFrom('secret_versions').select(VERSION_FIELDS).where('workspace_id', '=', workspaceId).where('secret_id', '=', secretId);
    if (beforeNumber !== null) q = q.where('version_number', '<', beforeNumber);
    return q.orderBy('version_number', 'desc').limit(limit).execute();
  },

  /** A version with its payload and its secret's wrapped data key: all that decryption needs. */
  versionWithKey: (db: Kysely<DB>, workspaceId: string, secretId: string, id: string) => versionsWithKey(db, workspaceId, secretId).where('v.id', '=', id).executeTakeFirst(),

  /** The id of the newest enabled version (what `latest` names), if any. */
  newestEnabledId: async (db: Kysely<DB>, workspaceId: string, secretId: string): Promise<string | undefined> =>
    (
      await db
        .selectFrom('secret_versions')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('secret_id', '=', secretId)
        .where('state', '=', 'enabled')
        .orderBy('version_number', 'desc')
        .limit(1)
        .executeTakeFirst()
    )?.id,

  /** The newest enabled version with its secret's wrapped data key. */
  newestEnabledWithKey: (db: Kysely<DB>, workspaceId: string, secretId: string) =>
    versionsWithKey(db, workspaceId, secretId).where('v.state', '=', 'enabled').orderBy('v.version_number', 'desc').limit(1).executeTakeFirst(),

  /**
   * SQLite keeps old page images in the WAL until a checkpoint, and the WAL file is reused,
   * not shrunk: a destroyed payload's ciphertext would linger there. Copying the WAL back
   * (secure_delete has zeroed the freed space) and truncating it removes it from both files.
   */
  flushDeletedPages: async (db: Kysely<DB>, engine: Engine): Promise<void> => {
    if (engine !== 'sqlite') return;
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(db);
      if (rows[0]?.busy === 0) return;
      // Busy at once: another connection is checkpointing (a server's checkpoint thread, another
      // process), which takes milliseconds, so it is asked again. Busy after the busy timeout: a
      // reader still uses the log, which asking again would not outwait.
      if (attempt === FLUSH_ATTEMPTS || performance.now() - started > BUSY_AT_ONCE_MS) throw new Error(`the WAL checkpoint was busy (attempt ${attempt})`);
      await new Promise((resolve) => setTimeout(resolve, FLUSH_RETRY_MS));
    }
  },
};
