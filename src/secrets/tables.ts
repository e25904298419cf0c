/**
 * The secrets area's tables, as stored: secrets and their versions. Each joins `DB` here, by
 * declaration merging (src/db/tables.ts says why); the area's modules import their row types from
 * this file.
 */
declare module '../db/tables.js' {
  interface DB {
    secrets: SecretsTable;
    secret_versions: SecretVersionsTable;
  }
}

export interface SecretsTable {
  id: string;
  workspace_id: string;
  name: string;
  etag: string;
  /** The last version number given out: versions are numbered 1, 2, ... per secret. */
  version_seq: number;
  /** The id of the master key that wrapped `wrapped_key` (see src/secrets/crypto.ts). */
  key_id: string;
  /** The secret's data key, AES-256-GCM sealed by that master key; never stored unwrapped. */
  wrapped_key: string;
  created_at: number;
  updated_at: number;
}

export type SecretVersionState = 'enabled' | 'disabled' | 'destroyed';

export interface SecretVersionsTable {
  id: string;
  workspace_id: string;
  secret_id: string;
  version_number: number;
  state: SecretVersionState;
  comment: string | null;
  etag: string;
  /** The payload sealed by the secret's data key; null once destroyed. */
  ciphertext: string | null;
  created_at: number;
  destroyed_at: number | null;
}
