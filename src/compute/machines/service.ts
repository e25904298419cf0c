import type { ServiceDeps } from '../../service-deps.js';
import type { MachinesTable, MachineStatus } from '../tables.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import { baseOf, canonicalId, newId } from '../../shared/ids.js';
import { nowSeconds } from '../../shared/clock.js';
import { ApiError, notFound, validationError } from '../../shared/errors.js';
import { pageById } from '../../shared/cursor.js';
import { assertIfMatch, newEtag } from '../../shared/etag.js';
import { startOperation } from '../../operations/service.js';
import { providerForConfig, type ProviderAccounts, type SecretLookup } from '../provider/accounts.js';
import { duringRequest } from '../provider/errors.js';
import { serverTypeProblem, type CatalogSource } from '../catalog.js';
import { compileGlob } from '../configs/glob.js';
import { computeConfigStore } from '../configs/store.js';
import { clusterForPlacement, defaultClusterId, lockClusterForPlacement } from '../clusters/placement.js';
import { JOB, OPERATION, type MachineJob } from '../jobs/kinds.js';
import { machineStore } from './store.js';
import { toMachine } from './representation.js';
import { startSuspend } from './suspend-start.js';
import { startResume } from './resume-start.js';
import { suspensionStore } from '../suspensions/store.js';
import type { CreateMachineBody } from './schemas.js';
import { writeTransaction } from '../../db/write-transaction.js';

export interface MachineServiceDeps extends Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'cursors' | 'jobs' | 'events'> {
  accounts: ProviderAccounts;
  secrets: SecretLookup;
  catalog: CatalogSource;
}

/** A machine no operation is changing: it can be deleted. */
const DELETABLE: MachineStatus[] = ['running', 'suspended', 'failed', 'expired'];

function busy(row: MachinesTable): ApiError {
  const metadata = { status: row.status, ...(row.operation_id ? { operation_id: row.operation_id } : {}) };
  const message =
    row.status === 'deleting'
      ? `The machine is already being deleted: operation ${row.operation_id} is done when it is gone`
      : `The machine is ${row.status}: wait until operation ${row.operation_id} is done, then delete it`;
  return new ApiError('MACHINE_BUSY', { message, metadata });
}

export function createMachineService({ db, engine, clock, cursors, jobs, events, accounts, secrets, catalog }: MachineServiceDeps) {
  async function visible(ctx: WorkspaceContext, rawId: string): Promise<MachinesTable> {
    const row = await machineStore.get(db, ctx.workspaceId, canonicalId('mch', rawId));
    if (!row) throw notFound('machine');
    return row;
  }

  return {
    /**
     * Checks what can be checked now (config 404, server type 422, cluster 404, the
     * config's account 409), then records the machine and leaves the provider call to a
     * job, so the provider's outages and limits become retries, not failed requests.
     */
    async create(ctx: WorkspaceContext, body: CreateMachineBody) {
      const configId = canonicalId('cc', body.compute_config_id);
      const config = await computeConfigStore.get(db, ctx.workspaceId, configId);
      if (!config) throw notFound('compute config', ['body', 'compute_config_id']);
      const filter = compileGlob(config.machine_type_filter)!;
      const problem = serverTypeProblem(await duringRequest(() => catalog.get()), config, filter, body.server_type);
      if (problem) throw validationError(['body', 'server_type'], problem);
      const now = nowSeconds(clock);
      let clusterId: string;
      let placed: string | null = null;
      if (body.cluster_id !== undefined) {
        const cluster = await clusterForPlacement(db, ctx.workspaceId, canonicalId('cl', body.cluster_id));
        if (!cluster) throw notFound('cluster', ['body', 'cluster_id']);
        // The default cluster (region null) takes any region; another only its own (docs/spec-gaps.md, "Clusters and regions").
        if (cluster.region !== null && cluster.region !== config.region) {
          throw validationError(
            ['body', 'cluster_id'],
            `The cluster ${cluster.name} is in region ${cluster.region}; the compute config ${config.name} makes machines in ${config.region}: use a config of ${cluster.region} or a cluster of ${config.region}`,
          );
        }
        clusterId = placed = cluster.id;
      } else {
        clusterId = await defaultClusterId(db, ctx.workspaceId, now);
      }
      if (!(await providerForConfig(accounts, secrets, config))) throw new ApiError('PROVIDER_ACCOUNT_UNUSABLE', { path: ['body', 'compute_config_id'] });

      const id = newId('mch');
      const row: MachinesTable = {
        id,
        workspace_id: ctx.workspaceId,
        compute_config_id: config.id,
        cluster_id: clusterId,
        provider: config.provider,
        hostname: body.hostname ?? `mch-${baseOf(id)}`,
        server_type: body.server_type,
        location: config.region,
        image: config.image,
        status: 'creating',
        provider_server_id: null,
        ipv4: null,
        snapshot_id: null,
        suspension_id: null,
        operation_id: null,
        cleanup: null,
        etag: newEtag(),
        created_at: now,
        updated_at: now,
      };
      await writeTransaction(db, ctx, async (trx) => {
        // Under the config's row lock: a concurrent delete of the config waits, then sees this machine.
        if (!(await computeConfigStore.getLocked(trx, engine, ctx.workspaceId, config.id))) throw notFound('compute config', ['body', 'compute_config_id']);
        // Under the cluster's lock: its deletion at the same moment either sees this machine (409)
        // or came first (this 404, before any job is queued: nothing reaches the provider).
        if (placed !== null && !(await lockClusterForPlacement(trx, ctx.workspaceId, placed))) throw notFound('cluster', ['body', 'cluster_id']);
        row.operation_id = await startOperation(trx, clock, ctx.workspaceId, OPERATION.createMachine);
        await machineStore.insert(trx, row);
        await jobs.enqueue(trx, { kind: JOB.createMachine, payload: { machineId: id } satisfies MachineJob, operationId: row.operation_id });
        await events.record(trx, ctx, 'machine.created', id, {
          hostname: row.hostname,
          server_type: row.server_type,
          compute_config_id: config.id,
          cluster_id: row.cluster_id,
          // The platform metrics' region filter reads it once the machine is deleted.
          location: row.location,
          operation_id: row.operation_id,
        });
      });
      return toMachine(row);
    },

    /** `clusterId`: only that cluster's (an unknown one lists nothing, as another filter value would). */
    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined, clusterId?: string) {
      const cluster = clusterId === undefined ? undefined : canonicalId('cl', clusterId);
      // The cursor is bound to the filter: a page of one cluster's list cannot continue another's.
      const list = cluster === undefined ? `machines:${ctx.workspaceId}` : `machines:${ctx.workspaceId}:${cluster}`;
      return pageById(cursors, list, { limit, cursor }, (after, take) => machineStore.page(db, ctx.workspaceId, take, after, cluster), toMachine);
    },

    async get(ctx: WorkspaceContext, rawId: string) {
      return toMachine(await visible(ctx, rawId));
    },

    /** Starts the suspension (snapshot, then delete the server) as an operation. */
    async suspend(ctx: WorkspaceContext, rawId: string, ifMatch: string, reason: 'manual' | 'downgrade') {
      const id = canonicalId('mch', rawId);
      return writeTransaction(db, ctx, async (trx) => {
        const row = await machineStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!row) throw notFound('machine');
        assertIfMatch(ifMatch, row.etag);
        if (row.status !== 'running') {
          throw new ApiError('MACHINE_NOT_RUNNING', { message: `Only a running machine can be suspended; this one is ${row.status}`, metadata: { status: row.status } });
        }
        const started = await startSuspend(trx, { clock, jobs }, row, reason);
        await events.record(trx, ctx, 'machine.suspended', id, { reason, suspension_id: started.suspension_id, operation_id: started.operation_id });
        return toMachine(started);
      });
    },

    /** `POST /v1/machines/{id}:resume`: what its suspension's `:resume` does. If-Match is checked when sent. */
    async resume(ctx: WorkspaceContext, rawId: string, ifMatch: string | undefined) {
      const id = canonicalId('mch', rawId);
      return writeTransaction(db, ctx, async (trx) => {
        const row = await machineStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!row) throw notFound('machine');
        if (ifMatch !== undefined) assertIfMatch(ifMatch, row.etag);
        const susp = row.status === 'suspended' && row.suspension_id !== null ? await suspensionStore.getLocked(trx, engine, ctx.workspaceId, row.suspension_id) : undefined;
        if (!susp) {
          throw new ApiError('MACHINE_NOT_SUSPENDED', { message: `Only a suspended machine can be resumed; this one is ${row.status}`, metadata: { status: row.status } });
        }
        const started = await startResume(trx, { clock, jobs }, row, susp);
        await events.record(trx, ctx, 'machine.resumed', id, { suspension_id: susp.id, operation_id: started.operation_id });
        return toMachine(started);
      });
    },

    /**
     * Starts deleting a machine that no operation is changing (running, suspended, failed,
     * expired): its suspension ends at once (no longer listed or resumable), and a job deletes
     * its server and snapshot at the provider, then the machine. 409 (7408) with its status
     * while an operation, a deletion among them, is under way.
     */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<{ operation_id: string }> {
      const id = canonicalId('mch', rawId);
      return writeTransaction(db, ctx, async (trx) => {
        const row = await machineStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!row) throw notFound('machine');
        assertIfMatch(ifMatch, row.etag);
        if (!DELETABLE.includes(row.status)) throw busy(row);
        const now = nowSeconds(clock);
        const operationId = await startOperation(trx, clock, ctx.workspaceId, OPERATION.deleteMachine);
        if (row.suspension_id !== null) await suspensionStore.transition(trx, row.suspension_id, 'active', { state: 'deleted', ended_at: now });
        // Its life ends here (unless it had failed or expired): machines_running counts it no more.
        await machineStore.transition(trx, id, row.status, { status: 'deleting', suspension_id: null, operation_id: operationId, etag: newEtag(), updated_at: now });
        await jobs.enqueue(trx, { kind: JOB.deleteMachine, payload: { machineId: id } satisfies MachineJob, operationId });
        await events.record(trx, ctx, 'machine.deleted', id, { hostname: row.hostname, previous_status: row.status, operation_id: operationId });
        return { operation_id: operationId };
      });
    },
  };
}

export type MachineService = ReturnType<typeof createMachineService>;
