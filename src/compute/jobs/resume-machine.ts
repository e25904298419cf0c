import type { Job } from '../../jobs/runner.js';
import { PermanentJobError } from '../../jobs/failure.js';
import { ErrorCodes } from '../../shared/errors.js';
import { nowSeconds } from '../../shared/clock.js';
import { newEtag } from '../../shared/etag.js';
import type { ProviderServer } from '../provider/types.js';
import { machineStore } from '../machines/store.js';
import { suspensionStore } from '../suspensions/store.js';
import type { SuspensionJob } from './kinds.js';
import { serverName } from './create-machine.js';
import { awaitAction, machineLabels, providerForMachine, removeServers, runMachineJob, StillRunning, type ComputeJobDeps } from './common.js';

/**
 * Resumes a suspended machine: a new server from the snapshot, then the snapshot is
 * deleted and the suspension ends. Safe to repeat (the server is found by its label).
 *
 * When it gives up, what the provider holds decides the end, once the provider can tell:
 * the snapshot still there: every server with the machine's label is deleted, and only once
 * the provider confirms that none is left is the machine suspended again (the suspension
 * active and listed); the snapshot gone but the new server there: it is the only copy, so
 * the resume is finished after all; neither: the machine failed and the suspension is over.
 */
export function resumeMachineJob(deps: ComputeJobDeps) {
  return async (job: Job<SuspensionJob>) => {
    const susp = await suspensionStore.byId(deps.db, job.payload.suspensionId);
    if (!susp || susp.state !== 'resuming') return { suspension_id: job.payload.suspensionId };
    const machine = await machineStore.byId(deps.db, susp.machine_id);
    if (!machine || machine.status !== 'resuming') return { suspension_id: susp.id };
    const labels = machineLabels(machine.id);

    const finish = async (running: ProviderServer) => {
      const now = nowSeconds(deps.clock);
      await deps.db.transaction().execute(async (trx) => {
        if (!(await suspensionStore.transition(trx, susp.id, 'resuming', { state: 'resumed', ended_at: now }))) return;
        await machineStore.transition(trx, machine.id, 'resuming', {
          status: 'running',
          provider_server_id: running.id,
          ipv4: running.ipv4,
          snapshot_id: null,
          suspension_id: null,
          cleanup: null,
          etag: newEtag(),
          updated_at: now,
        });
      });
      return { machine_id: machine.id, provider_server_id: running.id };
    };

    const backToSuspended = async () => {
      await deps.db.transaction().execute(async (trx) => {
        await suspensionStore.transition(trx, susp.id, 'resuming', { state: 'active' });
        await machineStore.transition(trx, machine.id, 'resuming', { status: 'suspended', cleanup: null, etag: newEtag(), updated_at: nowSeconds(deps.clock) });
      });
    };

    return runMachineJob(
      deps,
      job,
      machine,
      async () => {
        const provider = await providerForMachine(deps, machine);
        let [server] = await provider.findServers(labels);
        if (!server) {
          if (!(await provider.getImage(susp.snapshot_id))) {
            throw new PermanentJobError('The snapshot of this suspension no longer exists at the provider', ErrorCodes.PROVIDER_REJECTED.code);
          }
          const created = await provider.createServer({ name: serverName(machine.id), serverType: susp.server_type, image: susp.snapshot_id, location: susp.location, labels });
          server = created.server;
          await awaitAction(deps, provider, created.action, 'create the server from the snapshot', 'the creation of the server');
          server = (await provider.getServer(server.id)) ?? server;
        } else if (server.status === 'initializing' || server.status === 'starting') {
          throw new StillRunning('The server is still starting', 'the creation of the server');
        }
        await provider.deleteImage(susp.snapshot_id);
        return finish(server);
      },
      async (failure, provider) => {
        if (!provider) {
          // Nothing can be looked at with the account: the snapshot is deleted only after the
          // new server runs, so it most likely is still there.
          await backToSuspended();
          return { failed: failure };
        }
        const snapshot = await provider.getImage(susp.snapshot_id);
        if (snapshot) {
          await removeServers(deps, provider, labels);
          await backToSuspended();
          return { failed: failure };
        }
        const server = (await provider.findServers(labels)).find((s) => s.status !== 'deleting');
        if (server) return { ok: await finish(server) };
        const now = nowSeconds(deps.clock);
        await deps.db.transaction().execute(async (trx) => {
          if (!(await suspensionStore.transition(trx, susp.id, 'resuming', { state: 'expired', ended_at: now }))) return;
          await machineStore.transition(trx, machine.id, 'resuming', {
            status: 'failed',
            provider_server_id: null,
            ipv4: null,
            snapshot_id: null,
            suspension_id: null,
            cleanup: null,
            etag: newEtag(),
            updated_at: now,
          });
        });
        return { failed: failure };
      },
    );
  };
}
