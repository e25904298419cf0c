import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import type { InstallsTable } from './tables.js';
import type { RepositoryStorage } from '../git/repository-storage.js';
import { isUniqueViolation } from '../db/database.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, notFound } from '../shared/errors.js';
import { pageById } from '../shared/cursor.js';
import { newEtag, assertIfMatch } from '../shared/etag.js';
import { packageStore } from './packages/store.js';
import { asideName, installStore } from './store.js';
import { cancelUnfinished, queueRender } from './render-queue.js';
import { closeOpenOfDeleted } from './changes/machinery.js';
import { startOperation } from '../operations/service.js';
import { INSTALL_REPOSITORY_DELETE, OP_INSTALL_DELETE, type InstallRepositoryDelete } from './job-kinds.js';
import { toInstall } from './representation.js';
import { canonicalJson } from '../shared/canonical-json.js';
import type { CreateInstallBody, Install, UpdateInstallBody } from './schemas.js';
import { writeTransaction } from '../db/write-transaction.js';
import { clusterExists, lockClusterForPlacement } from '../compute/clusters/placement.js';

export type InstallServiceDeps = Pick<ServiceDeps, 'db' | 'clock' | 'cursors' | 'jobs' | 'log' | 'config' | 'events'> & { repos: RepositoryStorage };

export function createInstallService(deps: InstallServiceDeps) {
  const { db, clock, cursors, repos, log, events } = deps;

  async function visible(ctx: WorkspaceContext, rawId: string) {
    const row = await installStore.get(db, ctx.workspaceId, canonicalId('inst', rawId));
    if (!row) throw notFound('install');
    return row;
  }

  /** A version the install may use: 404 if the workspace has none such, 422 if it is another package's. */
  async function versionOf(ctx: WorkspaceContext, packageId: string, rawVersionId: string, field: string) {
    const version = await packageStore.getVersion(db, ctx.workspaceId, canonicalId('pkgv', rawVersionId));
    if (!version) throw notFound('package version', ['body', field]);
    if (version.package_id !== packageId) throw new ApiError('VERSION_OF_OTHER_PACKAGE', { path: ['body', field] });
    return version;
  }

  /** A cluster to place the install on (docs/spec-gaps.md, "Clusters and regions"): 404 at `body.cluster_id` when the workspace has none such. */
  async function clusterOf(ctx: WorkspaceContext, raw: string | null | undefined): Promise<string | null | undefined> {
    if (raw === undefined || raw === null) return raw;
    const id = canonicalId('cl', raw);
    if (!(await clusterExists(db, ctx.workspaceId, id))) throw notFound('cluster', ['body', 'cluster_id']);
    return id;
  }

  /** Under the cluster's lock: its deletion at the same moment sees this install (409), or came first (this 404). */
  async function lockCluster(trx: Parameters<typeof lockClusterForPlacement>[0], ctx: WorkspaceContext, id: string | null | undefined): Promise<void> {
    if (id && !(await lockClusterForPlacement(trx, ctx.workspaceId, id))) throw notFound('cluster', ['body', 'cluster_id']);
  }

  return {
    async create(ctx: WorkspaceContext, body: CreateInstallBody): Promise<Install> {
      const pkg = await packageStore.get(db, ctx.workspaceId, canonicalId('pkg', body.package_id));
      if (!pkg) throw notFound('package', ['body', 'package_id']);
      const version = await versionOf(ctx, pkg.id, body.version_id, 'version_id');
      const clusterId = (await clusterOf(ctx, body.cluster_id)) ?? null;
      const now = nowSeconds(clock);
      const row: InstallsTable = {
        id: newId('inst'),
        workspace_id: ctx.workspaceId,
        name: body.name,
        package_id: pkg.id,
        desired_version_id: version.id,
        current_version_id: null,
        values_json: JSON.stringify(body.values ?? {}),
        automatic_updates_enabled: body.automatic_updates_enabled ? 1 : 0,
        render_seq: 0,
        current_render_seq: 0,
        repository_bytes: null,
        etag: newEtag(),
        created_at: now,
        updated_at: now,
        deleted_at: null,
        deleted_name: null,
        delivery: body.delivery ?? 'direct',
        required_approvals: body.required_approvals ?? 0,
        change_request_seq: 0,
        cluster_id: clusterId,
      };
      let render;
      try {
        render = await writeTransaction(db, ctx, async (trx) => {
          // Under the package's lock: a deletion of the package at the same moment sees this install, or this sees the package gone.
          if (!(await packageStore.lock(trx, ctx.workspaceId, pkg.id))) throw notFound('package', ['body', 'package_id']);
          await lockCluster(trx, ctx, clusterId);
          await installStore.insert(trx, row);
          const queued = await queueRender(trx, deps, row, { versionId: version.id, valuesJson: row.values_json, authorId: ctx.actorId });
          await events.record(trx, ctx, 'install.created', row.id, { name: row.name, package_id: pkg.id, version_id: version.id, render_id: queued.id, cluster_id: clusterId });
          return queued;
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('INSTALL_NAME_TAKEN', { path: ['body', 'name'] });
        throw err;
      }
      // After the commit, so that a transaction that fails (or a process that dies before it
      // commits) leaves no repository behind. The install exists now whatever happens here: a
      // repository that could not be made is made by the first render's job (src/installs/renders/jobs.ts).
      try {
        await repos.create(row.id);
      } catch (err) {
        log.warn({ err, installId: row.id }, 'install repository not made yet; its first render makes it');
      }
      return toInstall({
        ...row,
        render_seq: 1,
        desired_semver: version.semver,
        current_semver: null,
        last_render_id: render.id,
        last_render_state: render.state,
        last_render_message: render.message,
        open_change_request_id: null,
      });
    },

    get: async (ctx: WorkspaceContext, rawId: string) => toInstall(await visible(ctx, rawId)),

    /** `clusterId`: only the installs on that cluster; the cursor is bound to it. */
    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined, clusterId?: string) {
      const cluster = clusterId === undefined ? undefined : canonicalId('cl', clusterId);
      const list = cluster === undefined ? `installs:${ctx.workspaceId}` : `installs:${ctx.workspaceId}:${cluster}`;
      return pageById(cursors, list, { limit, cursor }, (after, take) => installStore.page(db, ctx.workspaceId, take, after, cluster), toInstall);
    },

    /**
     * A new desired version or new values start a render; `automatic_updates_enabled` alone
     * does not. A PATCH that changes nothing changes nothing, not even the etag.
     */
    async update(ctx: WorkspaceContext, rawId: string, body: UpdateInstallBody, ifMatch: string): Promise<Install> {
      const found = await visible(ctx, rawId);
      const version = body.desired_version_id === undefined ? null : await versionOf(ctx, found.package_id, body.desired_version_id, 'desired_version_id');
      const clusterId = await clusterOf(ctx, body.cluster_id);
      const updated = await writeTransaction(db, ctx, async (trx) => {
        const install = await installStore.lock(trx, found.id);
        if (!install) throw notFound('install');
        assertIfMatch(ifMatch, install.etag);
        const versionChanged = version !== null && version.id !== install.desired_version_id;
        const valuesJson = body.values === undefined ? install.values_json : JSON.stringify(body.values);
        const valuesChanged = canonicalJson(JSON.parse(valuesJson)) !== canonicalJson(JSON.parse(install.values_json));
        const auto = body.automatic_updates_enabled === undefined ? install.automatic_updates_enabled : body.automatic_updates_enabled ? 1 : 0;
        const delivery = body.delivery ?? install.delivery;
        const requiredApprovals = body.required_approvals ?? install.required_approvals;
        const reviewChanged = delivery !== install.delivery || requiredApprovals !== install.required_approvals;
        const cluster = clusterId === undefined ? install.cluster_id : clusterId;
        if (!versionChanged && !valuesChanged && auto === install.automatic_updates_enabled && !reviewChanged && cluster === install.cluster_id) return install;
        if (cluster !== install.cluster_id) await lockCluster(trx, ctx, cluster);
        const desiredVersionId = version?.id ?? install.desired_version_id;
        // The delivery is changed first: a render this PATCH starts goes the new way.
        if (reviewChanged) await installStore.update(trx, install.id, { delivery, required_approvals: requiredApprovals });
        const queued = versionChanged || valuesChanged ? await queueRender(trx, deps, install, { versionId: desiredVersionId, valuesJson, authorId: ctx.actorId }) : null;
        // Values may hold anything: the event says they changed, not what they are.
        await events.record(trx, ctx, 'install.updated', install.id, {
          version_id: desiredVersionId,
          values_changed: valuesChanged,
          automatic_updates_enabled: auto === 1,
          delivery,
          required_approvals: requiredApprovals,
          render_id: queued?.id ?? null,
          cluster_id: cluster,
        });
        await installStore.update(trx, install.id, {
          desired_version_id: desiredVersionId,
          values_json: valuesJson,
          automatic_updates_enabled: auto,
          cluster_id: cluster,
          etag: newEtag(),
          updated_at: nowSeconds(clock),
        });
        return (await installStore.get(trx, ctx.workspaceId, install.id))!;
      });
      return toInstall(updated);
    },

    /**
     * Deletes the install (docs/spec-gaps.md, "Deleting an install and a package"): in one transaction it is
     * marked deleted (it reads 404 and leaves the lists; its name is moved aside for a new install
     * to take), its queued and running renders are canceled, its open change request closed, and a job is queued to remove its
     * repository, whose operation is the answer. Its renders stay readable by id.
     */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<{ operation_id: string }> {
      const found = await visible(ctx, rawId);
      return writeTransaction(db, ctx, async (trx) => {
        const install = await installStore.lock(trx, found.id);
        if (!install) throw notFound('install');
        assertIfMatch(ifMatch, install.etag);
        const now = nowSeconds(clock);
        const canceled = await cancelUnfinished(trx, clock, install.id);
        // docs/spec-gaps.md, "Repository change requests": a change request of a deleted install will never be merged.
        await closeOpenOfDeleted(trx, deps, ctx, install.id);
        const operationId = await startOperation(trx, clock, ctx.workspaceId, OP_INSTALL_DELETE);
        await installStore.update(trx, install.id, { deleted_at: now, deleted_name: install.name, name: asideName(install.id), etag: newEtag(), updated_at: now });
        const payload: InstallRepositoryDelete = { install_id: install.id, wait_for_operation_ids: canceled.operationIds };
        await deps.jobs.enqueue(trx, { kind: INSTALL_REPOSITORY_DELETE, payload, operationId });
        await events.record(trx, ctx, 'install.deleted', install.id, { name: install.name, package_id: install.package_id, operation_id: operationId, canceled_render_ids: canceled.renderIds });
        return { operation_id: operationId };
      });
    },
  };
}

export type InstallService = ReturnType<typeof createInstallService>;
