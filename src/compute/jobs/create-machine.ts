import type { Job } from '../../jobs/runner.js';
import { nowSeconds } from '../../shared/clock.js';
import { baseOf } from '../../shared/ids.js';
import { newEtag } from '../../shared/etag.js';
import { machineStore } from '../machines/store.js';
import type { MachineJob } from './kinds.js';
import { awaitAction, machineLabels, providerForMachine, removeServers, runMachineJob, StillRunning, type ComputeJobDeps } from './common.js';

/** The provider's server name: unique per project and a valid host name, unlike the machine's id. */
export const serverName = (machineId: string) => `wsp-${baseOf(machineId)}`;

const cloudConfig = (hostname: string) => `#cloud-config\nhostname: ${hostname}\n`;

/**
 * Creates the machine's server. Safe to repeat: a server that an earlier run created is
 * found by its label instead of being made twice. When it gives up, the machine fails only
 * once the provider confirms that no server with its label is left.
 */
export function createMachineJob(deps: ComputeJobDeps) {
  return async (job: Job<MachineJob>) => {
    const machine = await machineStore.byId(deps.db, job.payload.machineId);
    if (!machine || machine.status !== 'creating') return { machine_id: job.payload.machineId };
    const labels = machineLabels(machine.id);

    return runMachineJob(
      deps,
      job,
      machine,
      async () => {
        const provider = await providerForMachine(deps, machine);
        let [server] = await provider.findServers(labels);
        if (!server) {
          const created = await provider.createServer({
            name: serverName(machine.id),
            serverType: machine.server_type,
            image: machine.image,
            location: machine.location,
            labels,
            userData: cloudConfig(machine.hostname),
          });
          server = created.server;
          await awaitAction(deps, provider, created.action, 'create the server', 'the creation of the server');
          server = (await provider.getServer(server.id)) ?? server;
        } else if (server.status === 'initializing' || server.status === 'starting') {
          throw new StillRunning('The server is still starting', 'the creation of the server');
        }
        await machineStore.transition(deps.db, machine.id, 'creating', {
          status: 'running',
          provider_server_id: server.id,
          ipv4: server.ipv4,
          etag: newEtag(),
          updated_at: nowSeconds(deps.clock),
        });
        return { machine_id: machine.id, provider_server_id: server.id };
      },
      // A server made for a machine that failed would run (and cost) unseen: the machine
      // fails once none is left. Without a usable account (the workspace's own token
      // refused or disabled) nothing can be looked at: whatever is left is in its own project.
      async (failure, provider) => {
        if (provider) await removeServers(deps, provider, labels);
        await machineStore.transition(deps.db, machine.id, 'creating', { status: 'failed', cleanup: null, etag: newEtag(), updated_at: nowSeconds(deps.clock) });
        return { failed: failure };
      },
    );
  };
}
