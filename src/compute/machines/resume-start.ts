import type { Kysely } from 'kysely';
import type { ComputeSuspensionsTable, MachinesTable } from '../tables.js';
import type { DB } from '../../db/tables.js';
import { nowSeconds, type Clock } from '../../shared/clock.js';
import type { JobQueue } from '../../jobs/queue.js';
import { ApiError } from '../../shared/errors.js';
import { newEtag } from '../../shared/etag.js';
import { startOperation } from '../../operations/service.js';
import { JOB, OPERATION, type SuspensionJob } from '../jobs/kinds.js';
import { suspensionStore } from '../suspensions/store.js';
import { machineStore } from './store.js';

/**
 * Moves a suspended machine to `resuming` and queues the resume job with its operation: the
 * same for a suspension's `:resume` and a machine's. The caller holds the machine's row lock,
 * then the suspension's (always in that order: a deletion or an expiry takes them so too).
 */
export async function startResume(trx: Kysely<DB>, { clock, jobs }: { clock: Clock; jobs: JobQueue }, machine: MachinesTable, susp: ComputeSuspensionsTable): Promise<MachinesTable> {
  if (susp.state !== 'active') throw new ApiError('SUSPENSION_NOT_ACTIVE');
  const operationId = await startOperation(trx, clock, machine.workspace_id, OPERATION.resumeMachine);
  const set = { status: 'resuming' as const, operation_id: operationId, etag: newEtag(), updated_at: nowSeconds(clock) };
  await suspensionStore.transition(trx, susp.id, 'active', { state: 'resuming' });
  await machineStore.transition(trx, machine.id, machine.status, set);
  await jobs.enqueue(trx, { kind: JOB.resumeMachine, payload: { suspensionId: susp.id } satisfies SuspensionJob, operationId });
  return { ...machine, ...set };
}
