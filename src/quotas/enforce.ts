import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { identity } from '../identity/service.js';
import { ApiError, type ErrorName } from '../shared/errors.js';

/** A workspace quota as one check: what it is called in the error's metadata, its limit, how to count, how to refuse. */
export interface QuotaCheck<T extends { count: number }> {
  quota: string;
  limit: number;
  error: ErrorName;
  count: () => Promise<T>;
  message: (used: T) => string;
  headers?: (used: T) => Record<string, string>;
}

/**
 * Counts a workspace's things in the transaction that would add one, under the workspace's lock
 * (identity.lockWorkspace), and refuses at the limit: requests at the same instant never pass
 * a quota together. Call it in that transaction, before the insert.
 */
export async function enforceQuota<T extends { count: number }>(trx: Kysely<DB>, workspaceId: string, check: QuotaCheck<T>): Promise<void> {
  await identity.lockWorkspace(trx, workspaceId);
  const used = await check.count();
  if (used.count < check.limit) return;
  throw new ApiError(check.error, {
    message: check.message(used),
    metadata: { quota: check.quota, limit: String(check.limit), used: String(used.count) },
    ...(check.headers ? { headers: check.headers(used) } : {}),
  });
}
