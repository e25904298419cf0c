import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../db/tables.js';
import { dataKeyAad, KEY_BYTES, keyIdOf, open, seal, SealError } from './crypto.js';
import { ensureKeyFile, KEY_FILE, keyringFromConfig, MasterKeyError, PREVIOUS_KEY_FILE, readKeyFiles, writeKeyFile } from './master-key.js';
import { secretKeyStore } from './key-store.js';

export interface RotationResult {
  /** The master key every data key is now wrapped under. */
  key_id: string;
  /** Where that key came from: WSP_MASTER_KEY, or the key file this command just wrote. */
  key_source: string;
  rewrapped: number;
  /** Data keys still under another key, not counting `unreadable`: a server kept wrapping with an old key (see docs/spec-gaps.md). */
  remaining: number;
  /** Secrets whose data key failed authentication: corrupt or tampered rows, left as they are. */
  unreadable: string[];
}

const BATCH = 200;
/** Passes over the table: a pass that finds nothing left to re-wrap ends it. */
const MAX_PASSES = 5;

/**
 * `wsp admin rotate-master-key`. With WSP_MASTER_KEY set, re-wraps every data key under it,
 * unwrapping with WSP_MASTER_KEY_PREVIOUS. Without, makes a new key file (the old key moves to
 * master.key.previous first, so nothing is ever unreadable) and re-wraps under it. Payloads are
 * not touched. Servers keep working throughout: they unwrap with any key they know, and one
 * using key files re-reads them when it meets the new key id.
 */
export async function rotateMasterKey(db: Kysely<DB>, config: Pick<Config, 'masterKey' | 'masterKeyPrevious' | 'dataDir'>): Promise<RotationResult> {
  // Nothing is written (no key file, no recorded id) until every master key this database
  // depends on is known: a failed run must leave servers able to restart as they were.
  const inUse = await secretKeyStore.masterKeyIdsInUse(db);
  if (config.masterKey) {
    const given = keyringFromConfig(config);
    requireKnown(inUse, given.ids(), '');
  } else {
    const { ids, keyFileMissing } = keyFileIds(config);
    requireKnown(inUse, ids, keyFileMissing ? ` (there is no ${path.join(config.dataDir, KEY_FILE)}: is WSP_DATA_DIR the servers' data directory?)` : '');
    replaceKeyFile(config.dataDir);
  }
  const keyring = keyringFromConfig(config);
  const current = keyring.current;
  // From here on, servers using key files wrap new data keys under the new key too.
  await secretKeyStore.setMasterKeyId(db, current.id);

  let rewrapped = 0;
  const unreadable = new Set<string>();
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let found = 0;
    let after = '';
    for (;;) {
      const batch = await secretKeyStore.wrappedByOtherKeys(db, current.id, after, BATCH);
      if (batch.length === 0) break;
      for (const row of batch) {
        after = row.id;
        if (unreadable.has(row.id)) continue;
        found++;
        const old = keyring.find(row.key_id);
        if (!old) {
          throw new MasterKeyError(
            `secret ${row.id} has a data key wrapped by master key id ${row.key_id}, which is not among the keys given (${keyring.ids().join(', ')}); ` +
              'put that key in WSP_MASTER_KEY_PREVIOUS and run the command again',
          );
        }
        let dek: Buffer;
        try {
          dek = open(old.key, row.wrapped_key, dataKeyAad(row.id));
        } catch (err) {
          if (!(err instanceof SealError)) throw err;
          unreadable.add(row.id);
          continue;
        }
        try {
          // Only if nothing else re-wrapped it meanwhile (another run of this command).
          if (await secretKeyStore.rewrap(db, row.id, row.wrapped_key, current.id, seal(current.key, dek, dataKeyAad(row.id)))) rewrapped++;
        } finally {
          dek.fill(0);
        }
      }
    }
    if (found === 0) break;
  }
  const remaining = (await countWrappedByOtherKeys(db, current.id)) - unreadable.size;
  return { key_id: current.id, key_source: keyring.source, rewrapped, remaining, unreadable: [...unreadable] };
}

async function countWrappedByOtherKeys(db: Kysely<DB>, keyId: string): Promise<number> {
  let n = 0;
  let after = '';
  for (;;) {
    const batch = await secretKeyStore.wrappedByOtherKeys(db, keyId, after, BATCH);
    if (batch.length === 0) return n;
    n += batch.length;
    after = batch[batch.length - 1]!.id;
  }
}

/** Refuses (before anything is written) when a master key id the database uses is not among `known`. */
function requireKnown(inUse: string[], known: string[], hint: string): void {
  const missing = inUse.filter((id) => !known.includes(id));
  if (missing.length === 0) return;
  throw new MasterKeyError(
    `this database uses master key id ${missing.join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not among the keys given (${known.join(', ') || 'none'})${hint}; ` +
      'nothing was changed. Put the old key in WSP_MASTER_KEY_PREVIOUS (or master.key.previous) and run the command again',
  );
}

/** The ids of the keys the key files (and WSP_MASTER_KEY_PREVIOUS) hold, read without creating anything. */
function keyFileIds(config: Pick<Config, 'masterKeyPrevious' | 'dataDir'>): { ids: string[]; keyFileMissing: boolean } {
  const extra = config.masterKeyPrevious.map((k) => keyIdOf(Buffer.from(k, 'base64')));
  if (!fs.existsSync(path.join(config.dataDir, KEY_FILE))) return { ids: extra, keyFileMissing: true };
  const { current, previous } = readKeyFiles(config.dataDir);
  return { ids: [...new Set([...[current, ...previous].map(keyIdOf), ...extra])], keyFileMissing: false };
}

/**
 * A new master.key. The old key is added to master.key.previous before the new one replaces
 * it, and both writes are durable, so a crash at any point leaves every data key readable.
 */
function replaceKeyFile(dataDir: string): void {
  ensureKeyFile(dataDir);
  const { current, previous } = readKeyFiles(dataDir);
  const keep = new Map([current, ...previous].map((k) => [keyIdOf(k), k.toString('base64')]));
  writeKeyFile(path.join(dataDir, PREVIOUS_KEY_FILE), `${[...keep.values()].join('\n')}\n`, 'replace');
  writeKeyFile(path.join(dataDir, KEY_FILE), `${randomBytes(KEY_BYTES).toString('base64')}\n`, 'replace');
}
