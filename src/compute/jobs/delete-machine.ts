import type { Job } from '../../jobs/runner.js';
import { nowSeconds } from '../../shared/clock.js';
import { newEtag } from '../../shared/etag.js';
import type { MachinesTable } from '../tables.js';
import type { ComputeProvider } from '../provider/types.js';
import { machineStore } from '../machines/store.js';
import { suspensionStore } from '../suspensions/store.js';
import type { MachineJob } from './kinds.js';
import { awaitAction, machineLabels, providerForMachine, removeServers, runMachineJob, StillRunning, type ComputeJobDeps } from './common.js';

/**
 * Deletes a machine: every server and snapshot the provider holds for it (found by its label,
 * and by the ids the machine records), and only once the provider confirms that none is left,
 * the machine and its suspensions. Safe to repeat: what is gone already counts as deleted.
 *
 * Deleting never gives up while the provider can be asked: past its attempts the job keeps
 * coming back (every 5 minutes at most) until the provider confirms, so nothing is left
 * running or stored, and billed, unseen. Only when the config's own account cannot be used
 * (its secret has no enabled version, or the provider refuses the token) does the machine end
 * `failed`, keeping the ids of what may be left: deleting it again, once the account works,
 * finishes the job.
 */
export function deleteMachineJob(deps: ComputeJobDeps) {
  return async (job: Job<MachineJob>) => {
    const machine = await machineStore.byId(deps.db, job.payload.machineId);
    if (!machine || machine.status !== 'deleting') return { machine_id: job.payload.machineId, deleted: !machine };

    const deleteAll = async (provider: ComputeProvider) => {
      await removeEverything(deps, provider, machine);
      await deps.db.transaction().execute(async (trx) => {
        if (await machineStore.deleteDeleting(trx, machine.id)) await suspensionStore.deleteForMachine(trx, machine.id);
      });
      return { machine_id: machine.id, deleted: true };
    };

    return runMachineJob(
      deps,
      job,
      machine,
      async () => deleteAll(await providerForMachine(deps, machine)),
      async (failure, provider) => {
        if (provider) return { ok: await deleteAll(provider) };
        await machineStore.transition(deps.db, machine.id, 'deleting', { status: 'failed', cleanup: null, etag: newEtag(), updated_at: nowSeconds(deps.clock) });
        return { failed: failure };
      },
    );
  };
}

/** Deletes the machine's servers, then its snapshots; throws (the job comes back) until the provider lists none. */
async function removeEverything(deps: ComputeJobDeps, provider: ComputeProvider, machine: MachinesTable): Promise<void> {
  const labels = machineLabels(machine.id);
  await removeServers(deps, provider, labels);
  if (machine.provider_server_id !== null && (await provider.getServer(machine.provider_server_id))) {
    const deletion = await provider.deleteServer(machine.provider_server_id);
    if (deletion) await awaitAction(deps, provider, deletion, 'delete the server', 'the deletion of the server');
    if (await provider.getServer(machine.provider_server_id)) throw new StillRunning(`The provider still lists server ${machine.provider_server_id}`, 'the deletion of the server');
  }
  const snapshotIds = async () => {
    const ids = new Set((await provider.findSnapshots(labels)).map((i) => i.id));
    if (machine.snapshot_id !== null && (await provider.getImage(machine.snapshot_id))) ids.add(machine.snapshot_id);
    return [...ids];
  };
  for (const id of await snapshotIds()) await provider.deleteImage(id);
  const left = await snapshotIds();
  if (left.length > 0) throw new StillRunning(`The provider still lists snapshot ${left.join(', ')}`, 'the deletion of the snapshot');
}
