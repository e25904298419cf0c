import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { settingsStore } from '../db/settings.js';

/** The settings row naming the master key that new data keys are wrapped under (a key check value). */
const MASTER_KEY_ID = 'secrets_master_key_id';

/** Queries about master keys and wrapped data keys: the start check and rotation. */
export const secretKeyStore = {
  recordMasterKeyIdOnce: (db: Kysely<DB>, keyId: string) => settingsStore.getOrCreate(db, MASTER_KEY_ID, () => keyId),

  masterKeyId: async (db: Kysely<DB>): Promise<string | undefined> => (await settingsStore.get(db, MASTER_KEY_ID)) ?? undefined,

  setMasterKeyId: (db: Kysely<DB>, keyId: string) => settingsStore.set(db, MASTER_KEY_ID, keyId),

  /**
   * Every master key id the database depends on: those wrapping data keys, and the one recorded
   * as current (a server checks it at start).
   */
  masterKeyIdsInUse: async (db: Kysely<DB>): Promise<string[]> => {
    const recorded = await secretKeyStore.masterKeyId(db);
    const wrapping = await secretKeyStore.keyIdsInUse(db);
    return [...new Set([...(recorded !== undefined ? [recorded] : []), ...wrapping])];
  },

  keyIdsInUse: async (db: Kysely<DB>): Promise<string[]> => (await db.selectFrom('secrets').select('key_id').distinct().execute()).map((r) => r.key_id),

  /** Secrets whose data key is wrapped by another master key than `keyId`, in id order after `afterId`. */
  wrappedByOtherKeys: (db: Kysely<DB>, keyId: string, afterId: string, limit: number) =>
    db.selectFrom('secrets').select(['id', 'key_id', 'wrapped_key']).where('key_id', '!=', keyId).where('id', '>', afterId).orderBy('id').limit(limit).execute(),

  /** Replaces one wrapped data key, only if it is still the one read (nothing else ever changes it). */
  rewrap: async (db: Kysely<DB>, id: string, oldWrapped: string, keyId: string, wrapped: string): Promise<boolean> => {
    const res = await db.updateTable('secrets').set({ key_id: keyId, wrapped_key: wrapped }).where('id', '=', id).where('wrapped_key', '=', oldWrapped).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },
};
