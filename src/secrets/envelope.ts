import type { Kysely } from 'kysely';
import type { Logger } from '../shared/logger.js';
import type { DB } from '../db/tables.js';
import { ApiError } from '../shared/errors.js';
import { dataKeyAad, newDataKey, open, payloadAad, seal, SealError } from './crypto.js';
import { MasterKeyError, type Keyring } from './master-key.js';
import { secretKeyStore } from './key-store.js';

/** The key columns of a secret row: which master key wrapped its data key, and the wrapped key. */
export interface WrappedDataKey {
  key_id: string;
  wrapped_key: string;
}

/**
 * Envelope encryption: each secret has a random data key, kept only wrapped by a master key;
 * each payload is sealed with its secret's data key and bound to its version id. An unwrapped
 * key lives in memory for one operation and is zeroed after it.
 */
export class SecretEnvelope {
  constructor(
    private readonly db: Kysely<DB>,
    readonly keyring: Keyring,
    private readonly log: Logger,
  ) {}

  /**
   * Refuses to run with a master key the database was not set up with: a clear error at start
   * instead of failures (or, without authentication, garbage) at every read.
   */
  async verifyAtStart(): Promise<void> {
    const { keyring } = this;
    const recorded = await secretKeyStore.recordMasterKeyIdOnce(this.db, keyring.current.id);
    if (!keyring.has(recorded)) {
      throw new MasterKeyError(
        `the master key from ${keyring.source} (key id ${keyring.current.id}) is not the one this database uses (key id ${recorded}). ` +
          'Every server instance on one database needs the same WSP_MASTER_KEY; during a rotation, put the old key in WSP_MASTER_KEY_PREVIOUS.',
      );
    }
    const missing = (await secretKeyStore.keyIdsInUse(this.db)).filter((id) => !keyring.has(id));
    if (missing.length > 0) {
      throw new MasterKeyError(
        `secrets in this database have data keys wrapped by master key id(s) ${missing.join(', ')}, which ${keyring.source} does not provide. ` +
          'Add the missing key to WSP_MASTER_KEY_PREVIOUS (or master.key.previous) and run `wsp admin rotate-master-key`.',
      );
    }
  }

  /** A fresh data key for a new secret, wrapped under the current master key. */
  async newWrappedDataKey(secretId: string): Promise<WrappedDataKey> {
    // After a rotation by another process the database names the new key: pick up its file.
    if (this.keyring.reloadable && (await secretKeyStore.masterKeyId(this.db)) !== this.keyring.current.id) this.keyring.reload();
    const dek = newDataKey();
    try {
      const master = this.keyring.current;
      return { key_id: master.id, wrapped_key: seal(master.key, dek, dataKeyAad(secretId)) };
    } finally {
      dek.fill(0);
    }
  }

  sealPayload(secret: WrappedDataKey & { id: string }, versionId: string, plaintext: Buffer): string {
    return this.withDataKey(secret, (dek) => seal(dek, plaintext, payloadAad(versionId)));
  }

  openPayload(secret: WrappedDataKey & { id: string }, versionId: string, ciphertext: string | null): Buffer {
    return this.withDataKey(secret, (dek) => {
      if (ciphertext === null) throw this.corrupt(secret.id, versionId, 'an enabled version has no payload');
      try {
        return open(dek, ciphertext, payloadAad(versionId));
      } catch (err) {
        if (err instanceof SealError) throw this.corrupt(secret.id, versionId, err.message);
        throw err;
      }
    });
  }

  private withDataKey<T>(secret: WrappedDataKey & { id: string }, use: (dek: Buffer) => T): T {
    const master = this.keyring.find(secret.key_id);
    if (!master) {
      this.log.error({ secret_id: secret.id, key_id: secret.key_id, known_key_ids: this.keyring.ids() }, 'secret data key is wrapped by a master key this server does not have');
      throw new ApiError('MASTER_KEY_UNAVAILABLE', { metadata: { key_id: secret.key_id } });
    }
    let dek: Buffer;
    try {
      dek = open(master.key, secret.wrapped_key, dataKeyAad(secret.id));
    } catch (err) {
      if (err instanceof SealError) throw this.corrupt(secret.id, null, `data key: ${err.message}`);
      throw err;
    }
    try {
      return use(dek);
    } finally {
      dek.fill(0);
    }
  }

  private corrupt(secretId: string, versionId: string | null, reason: string): ApiError {
    // Server-side corruption or tampering: loud in the log, a stable code to the caller, never bytes.
    this.log.error({ secret_id: secretId, version_id: versionId, reason }, 'secret failed authentication: corrupt or tampered row');
    return new ApiError('SECRET_DATA_CORRUPT');
  }
}
