import type { ServiceDeps } from '../../service-deps.js';
import type { PackagesTable, PackageVersionsTable } from '../tables.js';
import { assertIfMatch, newEtag } from '../../shared/etag.js';
import { asideName, installStore } from '../store.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import { isUniqueViolation } from '../../db/database.js';
import { canonicalId, newId } from '../../shared/ids.js';
import { nowSeconds } from '../../shared/clock.js';
import { ApiError, notFound } from '../../shared/errors.js';
import { pageById } from '../../shared/cursor.js';
import { packageStore } from './store.js';
import { checkVersionFiles } from './version-files.js';
import { VERSION_PUBLISHED, type VersionPublished } from '../job-kinds.js';
import type { CreatePackageBody, CreateVersionBody, Package, PackageVersion } from './schemas.js';
import { toPackage, toVersion } from './representation.js';
import { MAX_RENDER_STEPS, TemplateRenderError } from './templates.js';
import { renderPoolFor, WorkspaceRendersBusy } from '../renders/render-pool.js';
import { writeTransaction } from '../../db/write-transaction.js';

/** Installs a 409 names at most (`metadata.install_ids`, comma-separated as `machine_ids` is); the message says when there are more. */
const MAX_LISTED_INSTALLS = 20;

export function createPackageService({ db, clock, cursors, jobs, config, events }: Pick<ServiceDeps, 'db' | 'clock' | 'cursors' | 'jobs' | 'config' | 'events'>) {
  async function visiblePackage(ctx: WorkspaceContext, rawId: string) {
    const row = await packageStore.get(db, ctx.workspaceId, canonicalId('pkg', rawId));
    if (!row) throw notFound('package');
    return row;
  }

  return {
    async create(ctx: WorkspaceContext, body: CreatePackageBody): Promise<Package> {
      const row: PackagesTable = { id: newId('pkg'), workspace_id: ctx.workspaceId, name: body.name, etag: newEtag(), created_at: nowSeconds(clock), deleted_at: null, deleted_name: null };
      try {
        await writeTransaction(db, ctx, async (trx) => {
          await packageStore.insert(trx, row);
          await events.record(trx, ctx, 'package.created', row.id, { name: row.name });
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('PACKAGE_NAME_TAKEN', { path: ['body', 'name'] });
        throw err;
      }
      return toPackage(row);
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      return pageById(cursors, `packages:${ctx.workspaceId}`, { limit, cursor }, (after, take) => packageStore.page(db, ctx.workspaceId, take, after), toPackage);
    },

    get: async (ctx: WorkspaceContext, rawId: string) => toPackage(await visiblePackage(ctx, rawId)),

    /**
     * Deletes the package and its versions with it (docs/spec-gaps.md, "Deleting an install and a package"):
     * soft, as installs are, since the renders of deleted installs still name its versions. 409
     * while a live install uses any of its versions; its name is free again at once.
     */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<void> {
      const found = await visiblePackage(ctx, rawId);
      await writeTransaction(db, ctx, async (trx) => {
        const pkg = await packageStore.lock(trx, ctx.workspaceId, found.id);
        if (!pkg) throw notFound('package');
        assertIfMatch(ifMatch, pkg.etag);
        const users = await installStore.idsUsingPackage(trx, ctx.workspaceId, pkg.id);
        if (users.length > 0) {
          throw new ApiError('PACKAGE_IN_USE', {
            message: `${users.length} install(s) use a version of the package: delete them first (${users.slice(0, MAX_LISTED_INSTALLS).join(', ')}${users.length > MAX_LISTED_INSTALLS ? `, and ${users.length - MAX_LISTED_INSTALLS} more` : ''})`,
            metadata: { install_ids: users.slice(0, MAX_LISTED_INSTALLS).join(',') },
          });
        }
        const now = nowSeconds(clock);
        await packageStore.update(trx, pkg.id, { deleted_at: now, deleted_name: pkg.name, name: asideName(pkg.id), etag: newEtag() });
        await events.record(trx, ctx, 'package.deleted', pkg.id, { name: pkg.name });
      });
    },

    async createVersion(ctx: WorkspaceContext, rawPackageId: string, body: CreateVersionBody): Promise<PackageVersion> {
      // The files are part of the body's well-formedness: checked (422) before existence (404).
      const files = checkVersionFiles(body.files);
      const pkg = await visiblePackage(ctx, rawPackageId);
      const row: PackageVersionsTable = {
        id: newId('pkgv'),
        workspace_id: ctx.workspaceId,
        package_id: pkg.id,
        semver: body.semver,
        files: JSON.stringify(files),
        created_at: nowSeconds(clock),
      };
      try {
        await writeTransaction(db, ctx, async (trx) => {
          await packageStore.insertVersion(trx, row);
          const event: VersionPublished = { workspace_id: ctx.workspaceId, package_id: pkg.id, version_id: row.id };
          await jobs.enqueue(trx, { kind: VERSION_PUBLISHED, payload: event });
          await events.record(trx, ctx, 'package_version.created', row.id, { package_id: pkg.id, semver: row.semver, files: Object.keys(files).length });
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('PACKAGE_VERSION_EXISTS', { path: ['body', 'semver'] });
        throw err;
      }
      return toVersion(row);
    },

    async listVersions(ctx: WorkspaceContext, rawPackageId: string, limit: number, cursor: string | undefined) {
      const pkg = await visiblePackage(ctx, rawPackageId);
      return pageById(
        cursors,
        `package_versions:${ctx.workspaceId}:${pkg.id}`,
        { limit, cursor },
        (after, take) => packageStore.pageVersions(db, ctx.workspaceId, pkg.id, take, after),
        (r) => r,
      );
    },

    async getVersion(ctx: WorkspaceContext, rawPackageId: string, rawVersionId: string): Promise<PackageVersion> {
      const pkg = await visiblePackage(ctx, rawPackageId);
      const row = await packageStore.getVersion(db, ctx.workspaceId, canonicalId('pkgv', rawVersionId));
      if (!row || row.package_id !== pkg.id) throw notFound('package version');
      return toVersion(row);
    },

    /**
     * Renders a version with `values` as an install's render would (the same threads, limits
     * and quota) and answers the files; nothing is written. A render failure is 422 naming the
     * file and the value at fault.
     */
    async preview(ctx: WorkspaceContext, rawPackageId: string, rawVersionId: string, values: Record<string, unknown>): Promise<{ files: Record<string, string> }> {
      const pkg = await visiblePackage(ctx, rawPackageId);
      const row = await packageStore.getVersion(db, ctx.workspaceId, canonicalId('pkgv', rawVersionId));
      if (!row || row.package_id !== pkg.id) throw notFound('package version');
      try {
        const files = await renderPoolFor(config.renders).render(ctx.workspaceId, row.files, JSON.stringify(values), { maxSteps: MAX_RENDER_STEPS, maxOutputBytes: config.quotas.renderOutputBytes });
        return { files: Object.fromEntries(files.map((f) => [f.path, f.content.toString('utf8')])) };
      } catch (err) {
        if (err instanceof TemplateRenderError) throw new ApiError('RENDER_FAILED', { message: err.message, path: ['body', 'values'] });
        if (err instanceof WorkspaceRendersBusy)
          throw new ApiError('RATE_LIMITED', { message: 'The workspace already renders as much as it may at once; retry in a moment', headers: { 'retry-after': '2' } });
        throw err;
      }
    },
  };
}

export type PackageService = ReturnType<typeof createPackageService>;
