import type { Job } from '../../jobs/runner.js';
import { PermanentJobError } from '../../jobs/runner.js';
import { ErrorCodes } from '../../shared/errors.js';
import { nowSeconds } from '../../shared/clock.js';
import { newEtag } from '../../http/etag.js';
import type { ComputeProvider, ProviderServer } from '../provider/types.js';
import { machineStore } from '../machines/store.js';
import { suspensionStore } from '../suspensions/store.js';
import type { SuspensionJob } from './kinds.js';
import { serverName } from './create-machine.js';
import { awaitAction, machineLabels, providerForMachine, runUndoable, StillRunning, type ComputeJobDeps } from './common.js';

/**
 * Resumes a suspended machine: a new server from the snapshot, then the snapshot is
 * deleted and the suspension ends. Safe to repeat (the server is found by its label). A
 * failure before the snapshot is deleted removes the new server and leaves the
 * suspension as it was.
 */
export function resumeMachineJob(deps: ComputeJobDeps) {
  return async (job: Job<SuspensionJob>) => {
    const susp = await suspensionStore.byId(deps.db, job.payload.suspensionId);
    if (!susp || susp.state !== 'resuming') return { suspension_id: job.payload.suspensionId };
    const machine = await machineStore.byId(deps.db, susp.machine_id);
    if (!machine || machine.status !== 'resuming') return { suspension_id: susp.id };
    const labels = machineLabels(machine.id);
    let provider: ComputeProvider | null = null;
    let server: ProviderServer | undefined;
    let snapshotDeleted = false;

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
          etag: newEtag(),
          updated_at: now,
        });
      });
    };

    return runUndoable(
      deps,
      job,
      async () => {
        provider = await providerForMachine(deps, machine);
        [server] = await provider.findServers(labels);
        if (!server) {
          if (!(await provider.getImage(susp.snapshot_id))) {
            throw new PermanentJobError('The snapshot of this suspension no longer exists at the provider', ErrorCodes.PROVIDER_REJECTED.code);
          }
          const created = await provider.createServer({ name: serverName(machine.id), serverType: susp.server_type, image: susp.snapshot_id, location: susp.location, labels });
          server = created.server;
          await awaitAction(deps, provider, created.action, 'create the server from the snapshot');
          server = (await provider.getServer(server.id)) ?? server;
        } else if (server.status === 'initializing' || server.status === 'starting') {
          throw new StillRunning('The server is still starting');
        }
        await provider.deleteImage(susp.snapshot_id);
        snapshotDeleted = true;
        await finish(server);
        return { machine_id: machine.id, provider_server_id: server.id };
      },
      async () => {
        if (snapshotDeleted && server) {
          // The new server is the only copy left: going back is no longer possible, only forward.
          await finish(server);
          return;
        }
        await deps.db.transaction().execute(async (trx) => {
          await suspensionStore.transition(trx, susp.id, 'resuming', { state: 'active' });
          await machineStore.transition(trx, machine.id, 'resuming', { status: 'suspended', etag: newEtag(), updated_at: nowSeconds(deps.clock) });
        });
        const p: ComputeProvider | null = provider;
        if (p) for (const s of await p.findServers(labels)) await p.deleteServer(s.id);
      },
    );
  };
}
