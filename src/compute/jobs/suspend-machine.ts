import type { Job } from '../../jobs/runner.js';
import { PermanentJobError } from '../../jobs/failure.js';
import { ErrorCodes } from '../../shared/errors.js';
import { nowSeconds } from '../../shared/clock.js';
import { newId } from '../../shared/ids.js';
import { newEtag } from '../../shared/etag.js';
import { machineStore } from '../machines/store.js';
import { suspensionStore } from '../suspensions/store.js';
import type { ProviderImage } from '../provider/types.js';
import type { SuspendJob } from './kinds.js';
import { awaitAction, machineLabels, operationLabels, providerForMachine, runMachineJob, StillRunning, type ComputeJobDeps } from './common.js';

const DAY = 86_400;

/** Cents a month for storing `sizeGb` at the provider's gross price per GB and month (EUR), to 1/100 cent. */
export const monthlyCostCents = (sizeGb: number, pricePerGbMonth: number) => Math.round(sizeGb * pricePerGbMonth * 100 * 100) / 100;

/**
 * Suspends a machine: snapshot it, wait for the snapshot, price it, and only then delete
 * the server and record the suspension. Safe to repeat: the snapshot is found by its
 * operation label on a retry, and a server already gone counts as deleted.
 *
 * When it gives up, what the provider holds decides the end, once the provider can tell:
 * the server still there: back to running on it, after every snapshot of the operation is
 * deleted; the server gone and a complete snapshot left: that snapshot is the machine now,
 * so the suspension is recorded after all; neither: the machine failed. A snapshot is never
 * deleted unless the provider has confirmed that the server exists.
 */
export function suspendMachineJob(deps: ComputeJobDeps) {
  return async (job: Job<SuspendJob>) => {
    const machine = await machineStore.byId(deps.db, job.payload.machineId);
    if (!machine || machine.status !== 'suspending' || machine.provider_server_id === null) return { machine_id: job.payload.machineId };
    const serverId = machine.provider_server_id;
    const snapshotLabels = operationLabels(job.operationId ?? job.id);

    /** The suspension of the machine on `snapshot`, once its server is gone. */
    const recordSuspension = async (snapshot: ProviderImage, pricePerGb: number) => {
      const now = nowSeconds(deps.clock);
      const suspensionId = newId('susp');
      await deps.db.transaction().execute(async (trx) => {
        const moved = await machineStore.transition(trx, machine.id, 'suspending', {
          status: 'suspended',
          provider_server_id: null,
          ipv4: null,
          snapshot_id: snapshot.id,
          suspension_id: suspensionId,
          cleanup: null,
          etag: newEtag(),
          updated_at: now,
        });
        if (!moved) return;
        await suspensionStore.insert(trx, {
          id: suspensionId,
          workspace_id: machine.workspace_id,
          machine_id: machine.id,
          cluster_id: machine.cluster_id,
          server_type: machine.server_type,
          location: machine.location,
          hostname: machine.hostname,
          provider: machine.provider,
          snapshot_id: snapshot.id,
          size_gb: snapshot.sizeGb!,
          monthly_cost_cents: monthlyCostCents(snapshot.sizeGb!, pricePerGb),
          reason: job.payload.reason,
          state: 'active',
          notices_sent: 0,
          expires_at: now + deps.config.suspensionRetentionDays * DAY,
          created_at: now,
          ended_at: null,
        });
      });
      return { machine_id: machine.id, suspension_id: suspensionId, snapshot_id: snapshot.id };
    };

    return runMachineJob(
      deps,
      job,
      machine,
      async () => {
        const provider = await providerForMachine(deps, machine);
        let [image] = await provider.findSnapshots(snapshotLabels);
        if (!image) {
          if (!(await provider.getServer(serverId))) {
            throw new PermanentJobError("The machine's server no longer exists at the provider", ErrorCodes.PROVIDER_REJECTED.code);
          }
          const made = await provider.createSnapshot(serverId, {
            description: `${machine.hostname} (${machine.id})`,
            labels: { ...machineLabels(machine.id), ...snapshotLabels },
          });
          await machineStore.update(deps.db, machine.id, { snapshot_id: made.image.id });
          await awaitAction(deps, provider, made.action, 'snapshot the server', 'the snapshot');
          image = (await provider.getImage(made.image.id)) ?? undefined;
          if (!image) throw new PermanentJobError('The snapshot disappeared at the provider', ErrorCodes.PROVIDER_ACTION_FAILED.code);
        }
        if (image.status === 'creating') throw new StillRunning('The snapshot is still being made', 'the snapshot');
        if (image.status !== 'available') throw new PermanentJobError('The snapshot failed at the provider', ErrorCodes.PROVIDER_ACTION_FAILED.code);
        if (image.sizeGb === null) throw new StillRunning('The provider has not reported the snapshot size yet', 'the snapshot');
        const pricePerGb = await provider.snapshotPricePerGbMonth();

        const deletion = await provider.deleteServer(serverId);
        if (deletion) await awaitAction(deps, provider, deletion, 'delete the server', 'the deletion of the server');
        return recordSuspension(image, pricePerGb);
      },
      async (failure, provider) => {
        const back = { status: 'running' as const, snapshot_id: null, cleanup: null, etag: newEtag(), updated_at: nowSeconds(deps.clock) };
        if (!provider) {
          // Nothing can be looked at with the account: the server deletion is the job's last
          // step, so the machine most likely still runs.
          await machineStore.transition(deps.db, machine.id, 'suspending', back);
          return { failed: failure };
        }
        const server = await provider.getServer(serverId);
        const snapshots = await provider.findSnapshots(snapshotLabels);
        if (server && server.status !== 'deleting') {
          for (const image of snapshots) await provider.deleteImage(image.id);
          if ((await provider.findSnapshots(snapshotLabels)).length > 0) throw new StillRunning('The provider still lists the snapshot', 'the deletion of the snapshot');
          await machineStore.transition(deps.db, machine.id, 'suspending', back);
          return { failed: failure };
        }
        if (server) throw new StillRunning('The server is being deleted', 'the deletion of the server');
        // The server is gone: a complete snapshot is all that is left of the machine.
        const kept = snapshots.find((i) => i.status === 'available' && i.sizeGb !== null);
        if (!kept && snapshots.some((i) => i.status !== 'unavailable')) throw new StillRunning('The snapshot is still being made', 'the snapshot');
        for (const image of snapshots) if (image !== kept) await provider.deleteImage(image.id);
        if (kept) return { ok: await recordSuspension(kept, await provider.snapshotPricePerGbMonth()) };
        await machineStore.transition(deps.db, machine.id, 'suspending', {
          status: 'failed',
          provider_server_id: null,
          ipv4: null,
          snapshot_id: null,
          cleanup: null,
          etag: newEtag(),
          updated_at: nowSeconds(deps.clock),
        });
        return { failed: failure };
      },
    );
  };
}
