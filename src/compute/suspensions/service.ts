import type { ServiceDeps } from '../../service-deps.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import type { SuspensionState } from '../tables.js';
import { canonicalId } from '../../shared/ids.js';
import { notFound } from '../../shared/errors.js';
import { machineStore } from '../machines/store.js';
import { toMachine } from '../machines/representation.js';
import { startResume } from '../machines/resume-start.js';
import { suspensionStore } from './store.js';
import { toSuspension } from './representation.js';
import { writeTransaction } from '../../db/write-transaction.js';

/** States of a suspension that is not over: the others no longer exist for callers. */
const OPEN: SuspensionState[] = ['active', 'resuming'];

export function createSuspensionService({ db, engine, clock, jobs, events }: Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'jobs' | 'events'>) {
  return {
    async list(ctx: WorkspaceContext) {
      return (await suspensionStore.active(db, ctx.workspaceId)).map(toSuspension);
    },

    /**
     * Starts recreating the server from the snapshot. A suspension that is over (resumed,
     * expired, or its machine deleted) no longer exists for the caller (404); one being resumed
     * is 409.
     */
    async resume(ctx: WorkspaceContext, rawId: string) {
      const id = canonicalId('susp', rawId);
      return writeTransaction(db, ctx, async (trx) => {
        const found = await suspensionStore.get(trx, ctx.workspaceId, id);
        if (!found) throw notFound('suspension');
        // The machine's lock first, then the suspension's: the order of every other writer.
        const machine = await machineStore.getLocked(trx, engine, ctx.workspaceId, found.machine_id);
        const susp = await suspensionStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!machine || !susp || !OPEN.includes(susp.state)) throw notFound('suspension');
        const started = await startResume(trx, { clock, jobs }, machine, susp);
        await events.record(trx, ctx, 'machine.resumed', machine.id, { suspension_id: id, operation_id: started.operation_id });
        return toMachine(started);
      });
    },
  };
}

export type SuspensionService = ReturnType<typeof createSuspensionService>;
