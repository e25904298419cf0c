import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { MachinesTable } from '../tables.js';
import { nowSeconds, type Clock } from '../../shared/clock.js';
import type { JobQueue } from '../../jobs/queue.js';
import { newEtag } from '../../shared/etag.js';
import { startOperation } from '../../operations/service.js';
import { JOB, OPERATION, type SuspendJob } from '../jobs/kinds.js';
import { machineStore } from './store.js';

/**
 * Moves a running machine (read under its row lock, in `trx`) to `suspending` and queues the
 * suspend job with its operation: the same for a caller's `:suspend` and an operator's
 * `wsp admin machine suspend` (a plan downgrade).
 */
export async function startSuspend(trx: Kysely<DB>, { clock, jobs }: { clock: Clock; jobs: JobQueue }, row: MachinesTable, reason: SuspendJob['reason']): Promise<MachinesTable> {
  const operationId = await startOperation(trx, clock, row.workspace_id, OPERATION.suspendMachine);
  const set = { status: 'suspending' as const, operation_id: operationId, etag: newEtag(), updated_at: nowSeconds(clock) };
  await machineStore.transition(trx, row.id, row.status, set);
  await jobs.enqueue(trx, { kind: JOB.suspendMachine, payload: { machineId: row.id, reason } satisfies SuspendJob, operationId });
  return { ...row, ...set };
}
