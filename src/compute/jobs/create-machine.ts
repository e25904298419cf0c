import type { Job } from '../../jobs/runner.js';
import { nowSeconds } from '../../shared/clock.js';
import { baseOf } from '../../shared/ids.js';
import { newEtag } from '../../http/etag.js';
import { machineStore } from '../machines/store.js';
import type { ComputeProvider } from '../provider/types.js';
import type { MachineJob } from './kinds.js';
import { awaitAction, machineLabels, providerForMachine, runUndoable, StillRunning, type ComputeJobDeps } from './common.js';

/** The provider's server name: unique per project and a valid host name, unlike the machine's id. */
export const serverName = (machineId: string) => `wsp-${baseOf(machineId)}`;

const cloudConfig = (hostname: string) => `#cloud-config\nhostname: ${hostname}\n`;

/**
 * Creates the machine's server. Safe to repeat: a server that an earlier run created is
 * found by its label instead of being made twice.
 */
export function createMachineJob(deps: ComputeJobDeps) {
  return async (job: Job<MachineJob>) => {
    const machine = await machineStore.byId(deps.db, job.payload.machineId);
    if (!machine || machine.status !== 'creating') return { machine_id: job.payload.machineId };
    const labels = machineLabels(machine.id);
    let createdId: number | null = null;
    let provider: ComputeProvider | null = null;

    return runUndoable(
      deps,
      job,
      async () => {
        provider = await providerForMachine(deps, machine);
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
          createdId = server.id;
          await awaitAction(deps, provider, created.action, 'create the server');
          server = (await provider.getServer(server.id)) ?? server;
        } else if (server.status === 'initializing' || server.status === 'starting') {
          throw new StillRunning('The server is still starting');
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
      async () => {
        await machineStore.transition(deps.db, machine.id, 'creating', { status: 'failed', etag: newEtag(), updated_at: nowSeconds(deps.clock) });
        if (!provider) return;
        // A server made for a machine that failed would run (and cost) unseen.
        const leftovers = createdId !== null ? [{ id: createdId }] : await provider.findServers(labels);
        for (const s of leftovers) await provider.deleteServer(s.id);
      },
    );
  };
}
