import type { Kysely } from 'kysely';
import type { DB } from './tables.js';
import { inTransaction } from './database.js';

/**
 * The Idempotency-Key a request claimed for its write (src/http/idempotency.ts): the key's scope
 * and the random token only that request holds.
 */
export interface WriteClaim {
  scope: { workspaceId: string; principalId: string; key: string };
  token: string;
}

/** What a write needs to know of its request: the claim its commit must mark, if it made one. */
export interface WriteOrigin {
  claim?: WriteClaim | undefined;
}

/**
 * Marks, inside the transaction of the request's write, that the claim's write took effect: the
 * claim is then never released nor taken over, so a retry cannot make the write again even when
 * the answer to the COMMIT (and so the request's own answer) is lost to a failure of the database
 * or the network between them. The states: `running` (claimed), `committed` (its write took
 * effect), `done` (its answer is kept for replay), `lost` (it took effect; its answer never came).
 */
export async function markWriteCommitted(trx: Kysely<DB>, claim: WriteClaim): Promise<void> {
  await trx
    .updateTable('idempotency_keys')
    .set({ state: 'committed' })
    .where('workspace_id', '=', claim.scope.workspaceId)
    .where('principal_id', '=', claim.scope.principalId)
    .where('key', '=', claim.scope.key)
    .where('state', '=', 'running')
    .where('claim_token', '=', claim.token)
    .execute();
}

/**
 * The transaction of a request's write: `fn`'s work, then, in the same transaction, the mark that
 * the request's Idempotency-Key claim (if any) has taken effect. Every service writing for a
 * request opens its transaction here, so "the write committed" is a step of the write itself
 * (an event recorded in it is another), not something recording an event happens to do.
 * Nested in a transaction already open (`db` is one), it joins it.
 */
export function writeTransaction<T>(db: Kysely<DB>, origin: WriteOrigin, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return inTransaction(db, async (trx) => {
    const out = await fn(trx);
    if (origin.claim) await markWriteCommitted(trx, origin.claim);
    return out;
  });
}
