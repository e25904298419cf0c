import type { ServiceDeps } from '../../deps.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import { canonicalId } from '../../shared/ids.js';
import { nowSeconds } from '../../shared/clock.js';
import { ApiError, notFound } from '../../shared/errors.js';
import { newEtag } from '../../shared/etag.js';
import { startOperation } from '../../operations/service.js';
import { machineStore } from '../machines/store.js';
import { toMachine } from '../machines/representation.js';
import { JOB, OPERATION, type SuspensionJob } from '../jobs/kinds.js';
import { suspensionStore } from './store.js';
import { toSuspension } from './representation.js';

export function createSuspensionService({ db, engine, clock, jobs }: Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'jobs'>) {
  return {
    async list(ctx: WorkspaceContext) {
      return (await suspensionStore.active(db, ctx.workspaceId)).map(toSuspension);
    },

    /**
     * Starts recreating the server from the snapshot. A suspension that is over (resumed or
     * expired) no longer exists for the caller (404); one being resumed is 409.
     */
    async resume(ctx: WorkspaceContext, rawId: string) {
      const id = canonicalId('susp', rawId);
      return db.transaction().execute(async (trx) => {
        const susp = await suspensionStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!susp || susp.state === 'resumed' || susp.state === 'expired') throw notFound('suspension');
        if (susp.state !== 'active') throw new ApiError('SUSPENSION_NOT_ACTIVE');
        const machine = await machineStore.byId(trx, susp.machine_id);
        if (!machine) throw notFound('machine');
        const operationId = await startOperation(trx, clock, ctx.workspaceId, OPERATION.resumeMachine);
        const set = { status: 'resuming' as const, operation_id: operationId, etag: newEtag(), updated_at: nowSeconds(clock) };
        await suspensionStore.transition(trx, id, 'active', { state: 'resuming' });
        await machineStore.update(trx, machine.id, set);
        await jobs.enqueue(trx, { kind: JOB.resumeMachine, payload: { suspensionId: id } satisfies SuspensionJob, operationId });
        return toMachine({ ...machine, ...set });
      });
    },
  };
}

export type SuspensionService = ReturnType<typeof createSuspensionService>;
