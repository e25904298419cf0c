import type { Job } from '../../jobs/runner.js';
import { nowSeconds } from '../../shared/clock.js';
import { newEtag } from '../../http/etag.js';
import { machineStore } from '../machines/store.js';
import { suspensionStore } from '../suspensions/store.js';
import { toJobError } from '../provider/errors.js';
import type { SuspensionJob } from '../jobs/kinds.js';
import { providerForMachine, type ComputeJobDeps } from '../jobs/common.js';

/**
 * Ends a suspension whose retention is over and deletes its snapshot at the provider.
 * The suspension ends first (compare-and-swap from active), so a resume can never start
 * on a snapshot being deleted; the machine keeps `snapshot_id` until the provider has
 * confirmed the deletion, so a retry knows there is still something to delete.
 */
export function expireSuspensionJob(deps: ComputeJobDeps) {
  const { db, clock } = deps;
  return async (job: Job<SuspensionJob>) => {
    const now = nowSeconds(clock);
    const susp = await suspensionStore.byId(db, job.payload.suspensionId);
    if (!susp || (susp.state === 'active' && susp.expires_at > now)) return { suspension_id: job.payload.suspensionId, expired: false };
    if (susp.state === 'active') {
      await db.transaction().execute(async (trx) => {
        if (!(await suspensionStore.transition(trx, susp.id, 'active', { state: 'expired', ended_at: now }))) return;
        await machineStore.transition(trx, susp.machine_id, 'suspended', { status: 'expired', suspension_id: null, etag: newEtag(), updated_at: now });
      });
    }
    const ended = await suspensionStore.byId(db, susp.id);
    const machine = await machineStore.byId(db, susp.machine_id);
    if (ended?.state !== 'expired' || !machine || machine.snapshot_id !== susp.snapshot_id) return { suspension_id: susp.id, expired: ended?.state === 'expired' };
    try {
      const provider = await providerForMachine(deps, machine);
      await provider.deleteImage(susp.snapshot_id);
    } catch (err) {
      throw toJobError(err);
    }
    await machineStore.update(db, machine.id, { snapshot_id: null });
    return { suspension_id: susp.id, expired: true, snapshot_deleted: susp.snapshot_id };
  };
}
