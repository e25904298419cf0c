import type { Kysely } from 'kysely';
import type { ComputeSuspensionsTable } from '../tables.js';
import type { DB } from '../../db/tables.js';
import type { Job } from '../../jobs/runner.js';
import { nowSeconds } from '../../shared/clock.js';
import { newEtag } from '../../shared/etag.js';
import { machineStore } from '../machines/store.js';
import { suspensionStore } from '../suspensions/store.js';
import { toJobError } from '../provider/errors.js';
import type { SuspensionJob } from '../jobs/kinds.js';
import { providerForMachine, type ComputeJobDeps } from '../jobs/common.js';

/**
 * Ends a suspension whose retention is over (compare-and-swap from active, in the caller's
 * transaction): no longer listed, resume 404, the machine `expired`. The machine keeps
 * `snapshot_id` until the provider has confirmed the deletion. False when it was not active
 * (being resumed, or already over).
 *
 * The machine's row first, then the suspension's: the lock order of every writer of both (a
 * resume, a deletion), so that none waits on another in a cycle. Its machine moves only while
 * it is suspended on this suspension, and then the suspension is active: both change, or
 * neither.
 */
export async function endSuspension(trx: Kysely<DB>, s: ComputeSuspensionsTable, now: number): Promise<boolean> {
  const moved = await machineStore.transition(trx, s.machine_id, 'suspended', { status: 'expired', suspension_id: null, etag: newEtag(), updated_at: now }, s.id);
  if (!moved) return false;
  if (!(await suspensionStore.transition(trx, s.id, 'active', { state: 'expired', ended_at: now }))) {
    throw new Error(`suspension ${s.id} was not active while its machine was suspended on it`);
  }
  return true;
}

/**
 * Deletes the snapshot of an expired suspension at the provider, then forgets it on the
 * machine. Queued by the expiry scan, and queued again each retry period for as long as the
 * machine still records the snapshot, so a deletion that gave up is not the end of it.
 */
export function expireSuspensionJob(deps: ComputeJobDeps) {
  const { db, clock } = deps;
  return async (job: Job<SuspensionJob>) => {
    const now = nowSeconds(clock);
    const susp = await suspensionStore.byId(db, job.payload.suspensionId);
    if (!susp || (susp.state === 'active' && susp.expires_at > now)) return { suspension_id: job.payload.suspensionId, expired: false };
    // A job queued before the scan ended suspensions itself may still find one active.
    if (susp.state === 'active') await db.transaction().execute((trx) => endSuspension(trx, susp, now));
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
