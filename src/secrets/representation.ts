import type { VersionRow } from './store.js';
import type { SecretVersion } from './schemas.js';

/**
 * A stored secret version as the API shows it. A secret itself needs no function: the store
 * selects exactly its API fields (SECRET_FIELDS).
 */
export function toVersion(row: VersionRow): SecretVersion {
  return {
    id: row.id,
    secret_id: row.secret_id,
    version_number: row.version_number,
    state: row.state,
    created_at: row.created_at,
    etag: row.etag,
    ...(row.comment !== null ? { comment: row.comment } : {}),
    ...(row.destroyed_at !== null ? { destroyed_at: row.destroyed_at } : {}),
  };
}
