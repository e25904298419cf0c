import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { notFound } from '../shared/errors.js';
import { operationStore } from './store.js';
import { toOperation } from './representation.js';

/**
 * The operations area's public face for the others: an operation is started in the transaction
 * that queues its job, and completed by the job runner in the transaction that finishes the job.
 */

/** Starts an operation record (in the caller's transaction); a job completes it. */
export async function startOperation(db: Kysely<DB>, clock: Clock, workspaceId: string, kind: string): Promise<string> {
  const id = newId('op');
  const now = nowSeconds(clock);
  await operationStore.insert(db, { id, workspace_id: workspaceId, kind, done: 0, error: null, result: null, created_at: now, updated_at: now });
  return id;
}

/** Marks an operation done once, with its result or its failure; a second completion (a retried job) changes nothing. */
export function completeOperation(trx: Kysely<DB>, clock: Clock, operationId: string, outcome: { result: unknown } | { error: { code: number; message: string } }): Promise<boolean> {
  return operationStore.complete(trx, operationId, nowSeconds(clock), outcome);
}

export function createOperationService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async get(ctx: WorkspaceContext, rawId: string) {
      const row = await operationStore.get(db, ctx.workspaceId, canonicalId('op', rawId));
      if (!row) throw notFound('operation');
      return toOperation(row);
    },
  };
}

export type OperationService = ReturnType<typeof createOperationService>;
