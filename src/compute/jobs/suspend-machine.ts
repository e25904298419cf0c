import type { Job } from '../../jobs/runner.js';
import { PermanentJobError } from '../../jobs/runner.js';
import { ErrorCodes } from '../../shared/errors.js';
import { nowSeconds } from '../../shared/clock.js';
import { newId } from '../../shared/ids.js';
import { newEtag } from '../../http/etag.js';
import { machineStore } from '../machines/store.js';
import { suspensionStore } from '../suspensions/store.js';
import type { ComputeProvider } from '../provider/types.js';
import type { SuspendJob } from './kinds.js';
import { awaitAction, machineLabels, operationLabels, providerForMachine, runUndoable, StillRunning, type ComputeJobDeps } from './common.js';

const DAY = 86_400;

/** Cents a month for storing `sizeGb` at the provider's gross price per GB and month (EUR), to 1/100 cent. */
export const monthlyCostCents = (sizeGb: number, pricePerGbMonth: number) => Math.round(sizeGb * pricePerGbMonth * 100 * 100) / 100;

/**
 * Suspends a machine: snapshot it, wait for the snapshot, price it, and only then delete
 * the server and record the suspension. Safe to repeat: the snapshot is found by its
 * operation label on a retry, and a server already gone counts as deleted. Until the
 * server is deleted everything can be undone; a failure puts the machine back to running
 * and removes the snapshot.
 */
export function suspendMachineJob(deps: ComputeJobDeps) {
  return async (job: Job<SuspendJob>) => {
    const machine = await machineStore.byId(deps.db, job.payload.machineId);
    if (!machine || machine.status !== 'suspending' || machine.provider_server_id === null) return { machine_id: job.payload.machineId };
    const serverId = machine.provider_server_id;
    const snapshotLabels = operationLabels(job.operationId ?? job.id);
    let provider: ComputeProvider | null = null;
    let serverDeleted = false;

    return runUndoable(
      deps,
      job,
      async () => {
        provider = await providerForMachine(deps, machine);
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
          await awaitAction(deps, provider, made.action, 'snapshot the server');
          image = (await provider.getImage(made.image.id)) ?? undefined;
          if (!image) throw new PermanentJobError('The snapshot disappeared at the provider', ErrorCodes.PROVIDER_ACTION_FAILED.code);
        }
        if (image.status === 'creating') throw new StillRunning('The snapshot is still being made');
        if (image.status !== 'available') throw new PermanentJobError('The snapshot failed at the provider', ErrorCodes.PROVIDER_ACTION_FAILED.code);
        if (image.sizeGb === null) throw new StillRunning('The provider has not reported the snapshot size yet');
        const pricePerGb = await provider.snapshotPricePerGbMonth();

        const deletion = await provider.deleteServer(serverId);
        if (deletion) await awaitAction(deps, provider, deletion, 'delete the server');
        serverDeleted = true;

        const now = nowSeconds(deps.clock);
        const suspensionId = newId('susp');
        const snapshot = image;
        await deps.db.transaction().execute(async (trx) => {
          const moved = await machineStore.transition(trx, machine.id, 'suspending', {
            status: 'suspended',
            provider_server_id: null,
            ipv4: null,
            snapshot_id: snapshot.id,
            suspension_id: suspensionId,
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
      },
      async () => {
        const now = nowSeconds(deps.clock);
        const p: ComputeProvider | null = provider;
        // Whether the server still exists decides which way is back: unknown counts as
        // existing, since deleting it is the last provider step and came after the snapshot.
        const server = p && !serverDeleted ? await p.getServer(serverId).catch(() => 'unknown' as const) : null;
        if (p === null || server !== null) {
          await machineStore.transition(deps.db, machine.id, 'suspending', { status: 'running', snapshot_id: null, etag: newEtag(), updated_at: now });
          if (p) for (const image of await p.findSnapshots(snapshotLabels)) await p.deleteImage(image.id);
        } else {
          // The server is gone: the snapshot is all that is left of the machine, so it is kept (snapshot_id).
          await machineStore.transition(deps.db, machine.id, 'suspending', { status: 'failed', provider_server_id: null, ipv4: null, etag: newEtag(), updated_at: now });
        }
      },
    );
  };
}
