import type { ServiceDeps } from '../../service-deps.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import type { ClustersTable } from '../tables.js';
import { isUniqueViolation } from '../../db/database.js';
import { writeTransaction } from '../../db/write-transaction.js';
import { canonicalId, newId } from '../../shared/ids.js';
import { nowSeconds } from '../../shared/clock.js';
import { ApiError, notFound, validationError } from '../../shared/errors.js';
import { pageById } from '../../shared/cursor.js';
import { assertIfMatch, newEtag } from '../../shared/etag.js';
import { installsOnCluster } from '../../installs/cluster-usage.js';
import { duringRequest } from '../provider/errors.js';
import type { CatalogSource } from '../catalog.js';
import { clusterStore, type StatusCounts } from './store.js';
import type { Cluster, CreateClusterBody, UpdateClusterBody } from './schemas.js';

export interface ClusterServiceDeps extends Pick<ServiceDeps, 'db' | 'clock' | 'cursors' | 'events'> {
  catalog: CatalogSource;
}

/** The default cluster's name, held for it even before it is made (it is made on a first machine's use). */
export const DEFAULT_CLUSTER_NAME = 'default';

/** How many ids a 409 names of each kind (the counts say how many there are). */
const NAMED = 50;

const STATUSES = ['creating', 'running', 'suspending', 'suspended', 'resuming', 'deleting', 'failed', 'expired'] as const;

/** docs/spec-gaps.md, "Clusters and regions": derived when read, so that no failed or forgotten step can leave it stuck. */
export function clusterStatus(counts: StatusCounts): Cluster['status'] {
  const n = (s: (typeof STATUSES)[number]) => counts[s] ?? 0;
  if (STATUSES.every((s) => n(s) === 0)) return 'empty';
  if (n('failed') > 0) return 'degraded';
  if (n('creating') + n('resuming') + n('suspending') + n('deleting') > 0) return 'provisioning';
  return 'ready';
}

export function toCluster(row: ClustersTable, counts: StatusCounts): Cluster {
  const machine_counts = { ...Object.fromEntries(STATUSES.map((s) => [s, counts[s] ?? 0])), total: STATUSES.reduce((sum, s) => sum + (counts[s] ?? 0), 0) } as Cluster['machine_counts'];
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    description: row.description,
    region: row.region,
    status: clusterStatus(counts),
    machine_counts,
    is_default: row.is_default === 1,
    etag: row.etag,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

const nameTaken = (name: string) =>
  new ApiError('CLUSTER_NAME_TAKEN', {
    message: name === DEFAULT_CLUSTER_NAME ? "The name default is the default cluster's" : `Another cluster of the workspace is named ${name}`,
    path: ['body', 'name'],
  });

export function createClusterService({ db, clock, cursors, events, catalog }: ClusterServiceDeps) {
  async function withCounts(row: ClustersTable): Promise<Cluster> {
    return toCluster(row, (await clusterStore.machineCounts(db, [row.id])).get(row.id)!);
  }

  return {
    async create(ctx: WorkspaceContext, body: CreateClusterBody): Promise<Cluster> {
      const regions = await duringRequest(() => catalog.regions());
      if (!regions.some((r) => r.id === body.region)) throw validationError(['body', 'region'], `region must be one of the provider's regions: ${regions.map((r) => r.id).join(', ')}`);
      if (body.name === DEFAULT_CLUSTER_NAME) throw nameTaken(body.name);
      const now = nowSeconds(clock);
      const row: ClustersTable = {
        id: newId('cl'),
        workspace_id: ctx.workspaceId,
        name: body.name,
        description: body.description ?? null,
        region: body.region,
        is_default: 0,
        etag: newEtag(),
        created_at: now,
        updated_at: now,
      };
      try {
        await writeTransaction(db, ctx, async (trx) => {
          await clusterStore.insert(trx, row);
          await events.record(trx, ctx, 'cluster.created', row.id, { name: row.name, region: row.region });
        });
      } catch (err) {
        // UNIQUE(workspace_id, name): of two creates with one name at once, the second lands here.
        if (isUniqueViolation(err)) throw nameTaken(body.name);
        throw err;
      }
      return toCluster(row, {});
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      const page = await pageById(
        cursors,
        `clusters:${ctx.workspaceId}`,
        { limit, cursor },
        (after, take) => clusterStore.page(db, ctx.workspaceId, take, after),
        (row) => row,
      );
      const counts = await clusterStore.machineCounts(
        db,
        page.data.map((r) => r.id),
      );
      return { ...page, data: page.data.map((r) => toCluster(r, counts.get(r.id)!)) };
    },

    async get(ctx: WorkspaceContext, rawId: string): Promise<Cluster> {
      const row = await clusterStore.get(db, ctx.workspaceId, canonicalId('cl', rawId));
      if (!row) throw notFound('cluster');
      return withCounts(row);
    },

    /** `name` and `description`; a PATCH that changes nothing keeps the etag and records nothing. */
    async update(ctx: WorkspaceContext, rawId: string, body: UpdateClusterBody, ifMatch: string): Promise<Cluster> {
      const id = canonicalId('cl', rawId);
      let updated: ClustersTable;
      try {
        updated = await writeTransaction(db, ctx, async (trx) => {
          const row = await clusterStore.lock(trx, ctx.workspaceId, id);
          if (!row) throw notFound('cluster');
          assertIfMatch(ifMatch, row.etag);
          const name = body.name ?? row.name;
          const description = body.description === undefined ? row.description : body.description;
          if (name === row.name && description === row.description) return row;
          if (name !== row.name) {
            if (row.is_default === 1) throw new ApiError('CLUSTER_IS_DEFAULT', { message: 'The default cluster keeps its name default (its description may change)', path: ['body', 'name'] });
            if (name === DEFAULT_CLUSTER_NAME) throw nameTaken(name);
          }
          const next = { ...row, name, description, etag: newEtag(), updated_at: nowSeconds(clock) };
          await clusterStore.update(trx, id, { name, description, etag: next.etag, updated_at: next.updated_at });
          await events.record(trx, ctx, 'cluster.updated', id, { name, previous_name: row.name, description_changed: description !== row.description });
          return next;
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(body.name!);
        throw err;
      }
      return withCounts(updated);
    },

    /**
     * Answers at once: 204 for an empty cluster, else 409 naming what it holds. Under the
     * cluster's lock, which a machine or install placed on it takes too: of a deletion and a
     * placement at the same moment one fails cleanly (this 409, or their 404), and no machine is
     * left pointing at a cluster that is gone (its provider job is queued with its row).
     */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<void> {
      const id = canonicalId('cl', rawId);
      await writeTransaction(db, ctx, async (trx) => {
        const row = await clusterStore.lock(trx, ctx.workspaceId, id);
        if (!row) throw notFound('cluster');
        assertIfMatch(ifMatch, row.etag);
        if (row.is_default === 1) throw new ApiError('CLUSTER_IS_DEFAULT', { message: 'The default cluster takes the machines created without cluster_id: it cannot be deleted' });
        const machines = await clusterStore.machineIds(trx, id, NAMED);
        const machineCount = machines.length < NAMED ? machines.length : await clusterStore.machineCount(trx, id);
        const installs = await installsOnCluster(trx, ctx.workspaceId, id, NAMED);
        if (machineCount + installs.count > 0) {
          const held = [machineCount > 0 ? `${machineCount} machine(s): ${machines.join(', ')}` : '', installs.count > 0 ? `${installs.count} install(s): ${installs.ids.join(', ')}` : '']
            .filter(Boolean)
            .join('; ');
          throw new ApiError('CLUSTER_NOT_EMPTY', {
            message: `The cluster still holds ${held}: delete the machines and delete the installs or move them to another cluster first`,
            metadata: { machine_ids: machines.join(','), install_ids: installs.ids.join(','), machine_count: String(machineCount), install_count: String(installs.count) },
          });
        }
        await clusterStore.delete(trx, id);
        await events.record(trx, ctx, 'cluster.deleted', id, { name: row.name, region: row.region });
      });
    },
  };
}

export type ClusterService = ReturnType<typeof createClusterService>;
