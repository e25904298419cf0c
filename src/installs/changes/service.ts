import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import type { InstallServiceDeps } from '../service.js';
import type { ChangeRequestState, RepositoryChangeRequestsTable } from '../tables.js';
import { canonicalId } from '../../shared/ids.js';
import { nowSeconds } from '../../shared/clock.js';
import { ApiError, notFound } from '../../shared/errors.js';
import { assertIfMatch, newEtag } from '../../shared/etag.js';
import { pageById } from '../../shared/cursor.js';
import { writeTransaction } from '../../db/write-transaction.js';
import { installStore, type InstallView } from '../store.js';
import { renderStore } from '../renders/store.js';
import { landCommit, landRunningRestores } from '../renders/landing.js';
import { changeRequestStore } from './store.js';
import { CHANGE_REQUEST_LAND, type ChangeRequestLand } from '../job-kinds.js';
import { ensureRef, reparent, treeChanges } from './machinery.js';
import { mergeBlockers, toChangeRequest } from './representation.js';
import type { ChangeRequest, ChangeRequestDiff, MergeChangeRequestBody, UpdateChangeRequestBody } from './schemas.js';
import { BranchBusyError } from '../../git/branch-busy.js';

/**
 * How long after a merge its job checks that `main` moved (src/installs/changes/land-job.ts): long
 * enough that the request has moved it (the job then finds nothing to do), and that a process
 * dying inside the merge has not claimed the job first (its claim would hold for a lease).
 */
const LAND_CHECK_AFTER_MS = 5_000;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const textOf = (b: Buffer | null): string | null => {
  if (b === null) return null;
  try {
    return utf8.decode(b);
  } catch {
    return null;
  }
};

/**
 * Repository change requests (docs/spec-gaps.md, "Repository change requests"):
 * reading them (each read re-parents an open one whose base `main` has left, and mends its ref),
 * and the writes that move them. Every write locks the install first, as every writer of its
 * branch and refs does, then checks the change request's etag: of two writes at once (two merges,
 * a merge and a close) exactly one finds the etag it was given.
 */
export function createChangeRequestService(deps: InstallServiceDeps) {
  const { db, clock, cursors, repos, events, log } = deps;

  async function present(rows: RepositoryChangeRequestsTable[]): Promise<ChangeRequest[]> {
    const approvals = await changeRequestStore.approvals(
      db,
      rows.map((r) => r.id),
    );
    const required = await installStore.requiredApprovals(db, [...new Set(rows.map((r) => r.install_id))]);
    return rows.map((r) =>
      toChangeRequest(
        r,
        approvals.filter((a) => a.change_request_id === r.id),
        required.get(r.install_id) ?? 0,
      ),
    );
  }

  async function visible(ctx: WorkspaceContext, rawId: string): Promise<RepositoryChangeRequestsTable> {
    const row = await changeRequestStore.get(db, ctx.workspaceId, canonicalId('rcr', rawId));
    if (!row) throw notFound('repository change request');
    return row;
  }

  /**
   * An open change request is always a fast-forward of `main`: if `main` moved since it was built
   * (an operator's repair), its tree is re-parented onto the head now, in a transaction of its
   * own under the install's lock. Its ref is mended if a crash left it behind.
   */
  async function settle(row: RepositoryChangeRequestsTable): Promise<RepositoryChangeRequestsTable> {
    if (row.state !== 'open') return row;
    const head = await repos.head(row.install_id).catch(() => undefined);
    if (head === undefined) return row;
    let settled = row;
    if (head !== row.base_commit_sha) {
      settled =
        (await db
          .transaction()
          .execute(async (trx) => {
            if (!(await installStore.lock(trx, row.install_id))) return null;
            await landRunningRestores(trx, repos, row.install_id);
            const current = await changeRequestStore.byId(trx, row.id);
            return current ? reparent(trx, deps, current, await repos.head(row.install_id)) : null;
          })
          // A read does not fail on a writer holding main at this instant: it answers as stored, and the next read settles it.
          .catch((err: unknown) => {
            if (err instanceof BranchBusyError) return null;
            throw err;
          })) ?? row;
    }
    if (settled.state === 'open') await ensureRef(repos, settled).catch((err: unknown) => log.warn({ err, changeRequestId: row.id }, 'change request ref not mended'));
    return settled;
  }

  /** One write: the install locked, the change request read again under the lock and its etag checked. */
  async function write<T>(ctx: WorkspaceContext, rawId: string, ifMatch: string, fn: (trx: Kysely<DB>, cr: RepositoryChangeRequestsTable, install: InstallView) => Promise<T>): Promise<T> {
    const found = await visible(ctx, rawId);
    return writeTransaction(db, ctx, async (trx) => {
      const install = await installStore.lock(trx, found.install_id);
      if (!install) throw notFound('repository change request');
      const cr = (await changeRequestStore.byId(trx, found.id))!;
      assertIfMatch(ifMatch, cr.etag);
      return fn(trx, cr, install);
    });
  }

  const notOpen = (cr: RepositoryChangeRequestsTable) => new ApiError('CHANGE_REQUEST_NOT_OPEN', { message: `Change request #${cr.number} is ${cr.state}, not open`, metadata: { state: cr.state } });

  async function moved(trx: Kysely<DB>, cr: RepositoryChangeRequestsTable, to: Partial<RepositoryChangeRequestsTable>): Promise<RepositoryChangeRequestsTable> {
    const fields = { ...to, etag: newEtag(), updated_at: nowSeconds(clock) };
    if (!(await changeRequestStore.transition(trx, cr.id, cr, fields))) throw new Error(`change request ${cr.id} moved under the install's lock`);
    return { ...cr, ...fields };
  }

  const one = async (row: RepositoryChangeRequestsTable) => (await present([row]))[0]!;
  const subjectOf = async (cr: RepositoryChangeRequestsTable) => (await repos.commitMessage(cr.install_id, cr.head_commit_sha)).split('\n')[0]!;

  return {
    async get(ctx: WorkspaceContext, rawId: string): Promise<ChangeRequest> {
      return one(await settle(await visible(ctx, rawId)));
    },

    async list(ctx: WorkspaceContext, q: { install_id?: string | undefined; state?: ChangeRequestState | undefined; limit: number; cursor?: string | undefined }) {
      const installId = q.install_id === undefined ? undefined : canonicalId('inst', q.install_id);
      const page = await pageById(
        cursors,
        `repository_change_requests:${ctx.workspaceId}:${installId ?? ''}:${q.state ?? ''}`,
        { limit: q.limit, cursor: q.cursor },
        (after, take) => changeRequestStore.page(db, ctx.workspaceId, { installId, state: q.state }, take, after),
        (r) => r,
      );
      return { ...page, data: await present(page.data) };
    },

    async diff(ctx: WorkspaceContext, rawId: string): Promise<ChangeRequestDiff> {
      const cr = await settle(await visible(ctx, rawId));
      if (await installStore.isDeleted(db, cr.install_id)) throw notFound('repository change request', undefined);
      const baseTree = await repos.treeOf(cr.install_id, cr.base_commit_sha);
      const files = await treeChanges(repos, cr.install_id, baseTree, cr.tree_sha);
      return { files: files.map((f) => ({ path: f.path, status: f.status, before: textOf(f.before), after: textOf(f.after) })) };
    },

    async update(ctx: WorkspaceContext, rawId: string, body: UpdateChangeRequestBody, ifMatch: string): Promise<ChangeRequest> {
      const row = await write(ctx, rawId, ifMatch, async (trx, cr) => {
        const title = body.title ?? cr.title;
        const description = body.description ?? cr.description;
        if (title === cr.title && description === cr.description) return cr;
        const next = await moved(trx, cr, { title, description });
        await events.record(trx, ctx, 'repository_change_request.updated', cr.id, {
          install_id: cr.install_id,
          number: cr.number,
          title_changed: title !== cr.title,
          description_changed: description !== cr.description,
        });
        return next;
      });
      return one(row);
    },

    /** A person's approval (the route refuses API tokens); never its author's; a second approval by the same person keeps the first. */
    async approve(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<ChangeRequest> {
      const found = await visible(ctx, rawId);
      if (ctx.principal.kind === 'api_token') throw new ApiError('ROLE_REQUIRED', { message: 'A change request is approved by a person, never by an API token' });
      if (found.author_id !== null && found.author_id === ctx.actorId) throw new ApiError('CHANGE_REQUEST_APPROVER_IS_AUTHOR');
      const row = await write(ctx, rawId, ifMatch, async (trx, cr) => {
        if (cr.state !== 'open') throw notOpen(cr);
        const now = nowSeconds(clock);
        if (!(await changeRequestStore.approve(trx, cr.id, ctx.actorId, now))) return cr;
        const next = await moved(trx, cr, {});
        await events.record(trx, ctx, 'repository_change_request.approved', cr.id, { install_id: cr.install_id, number: cr.number, head_commit_sha: cr.head_commit_sha });
        return next;
      });
      return one(row);
    },

    /**
     * Moves `main` to the head: in one transaction, under the install's lock, the change request
     * becomes `merged`, its render `succeeded` and `current_version` moves; `main` then moves by
     * compare-and-swap from the base the transaction checked, right after the commit (as a
     * restore's commit lands: src/installs/renders/landing.ts). A process that dies in between
     * leaves the move to the job the transaction queued (./land-job.ts), or to the next writer of
     * the install's branch, which lands it first, whichever comes first.
     */
    async merge(ctx: WorkspaceContext, rawId: string, body: MergeChangeRequestBody, ifMatch: string): Promise<ChangeRequest> {
      await settle(await visible(ctx, rawId));
      const row = await write(ctx, rawId, ifMatch, async (trx, cr, install) => {
        await landRunningRestores(trx, repos, install.id);
        if (body.head_commit_sha !== undefined && body.head_commit_sha !== cr.head_commit_sha) {
          throw new ApiError('CHANGE_REQUEST_HEAD_MOVED', { metadata: { head_commit_sha: cr.head_commit_sha }, path: ['body', 'head_commit_sha'] });
        }
        const approvals = await changeRequestStore.approvals(trx, [cr.id]);
        const blockers = mergeBlockers(cr, approvals.length, install.required_approvals);
        if (blockers.length > 0) {
          throw new ApiError('CHANGE_REQUEST_NOT_MERGEABLE', { message: `Change request #${cr.number} cannot be merged: ${blockers.join(', ')}`, metadata: { merge_blockers: blockers.join(',') } });
        }
        // Moved since the re-parent above (another instance's repair at this instant): the caller reads it again.
        if ((await repos.head(install.id)) !== cr.base_commit_sha)
          throw new ApiError('CHANGE_REQUEST_BRANCH_BUSY', { message: "The install's main moved while the merge was checked: read the change request again and retry" });
        const now = nowSeconds(clock);
        const next = await moved(trx, cr, { state: 'merged', merged_by: ctx.actorId, merged_at: now, landed: 0 });
        const render = (await renderStore.byId(trx, cr.render_id))!;
        const ok = await renderStore.transition(trx, render.id, 'awaiting_merge', { state: 'succeeded', commit_sha: cr.head_commit_sha, message: await subjectOf(cr), updated_at: now });
        if (!ok) throw new Error(`render ${render.id} of open change request ${cr.id} is ${render.state}`);
        if (render.seq > install.current_render_seq) {
          await installStore.update(trx, install.id, { current_version_id: render.package_version_id, current_render_seq: render.seq, etag: newEtag(), updated_at: now });
        }
        // Owed if this process dies before `main` moves below (or finds it locked): any live worker lands it then.
        const owed: ChangeRequestLand = { install_id: install.id, change_request_id: cr.id };
        await deps.jobs.enqueue(trx, { kind: CHANGE_REQUEST_LAND, payload: owed, runAt: clock.nowMs() + LAND_CHECK_AFTER_MS });
        await events.record(trx, ctx, 'repository_change_request.merged', cr.id, {
          install_id: cr.install_id,
          number: cr.number,
          render_id: cr.render_id,
          head_commit_sha: cr.head_commit_sha,
          base_commit_sha: cr.base_commit_sha,
        });
        return next;
      });
      try {
        if ((await landCommit(repos, row.install_id, row.head_commit_sha)) === 'landed') {
          await changeRequestStore.update(db, row.id, { landed: 1 });
          row.landed = 1;
        } else log.warn({ changeRequestId: row.id }, 'merged change request not on main yet; the next writer of the branch lands it');
      } catch (err) {
        log.warn({ err, changeRequestId: row.id }, 'merged change request not on main yet; the next writer of the branch lands it');
      }
      return one(row);
    },

    async close(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<ChangeRequest> {
      const row = await write(ctx, rawId, ifMatch, async (trx, cr) => {
        if (cr.state !== 'open') throw notOpen(cr);
        const now = nowSeconds(clock);
        const next = await moved(trx, cr, { state: 'closed', closed_at: now });
        await renderStore.transition(trx, cr.render_id, 'awaiting_merge', { state: 'canceled', message: `Canceled: change request #${cr.number} was closed`, updated_at: now });
        await events.record(trx, ctx, 'repository_change_request.closed', cr.id, { install_id: cr.install_id, number: cr.number, render_id: cr.render_id });
        return next;
      });
      return one(row);
    },

    /** Only while no newer render of the install exists: its render then awaits a merge again (re-parented if `main` moved). */
    async reopen(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<ChangeRequest> {
      const row = await write(ctx, rawId, ifMatch, async (trx, cr, install) => {
        if (cr.state !== 'closed')
          throw new ApiError('CHANGE_REQUEST_NOT_CLOSED', { message: `Change request #${cr.number} is ${cr.state}: only a closed one can be reopened`, metadata: { state: cr.state } });
        const render = (await renderStore.byId(trx, cr.render_id))!;
        if (install.render_seq > render.seq) {
          throw new ApiError('CHANGE_REQUEST_NEWER_RENDER', { metadata: { render_id: install.last_render_id ?? '' } });
        }
        const now = nowSeconds(clock);
        const next = await moved(trx, cr, { state: 'open', closed_at: null });
        await renderStore.transition(trx, render.id, 'canceled', { state: 'awaiting_merge', message: `Awaiting merge of change request #${cr.number}`, updated_at: now });
        await events.record(trx, ctx, 'repository_change_request.reopened', cr.id, { install_id: cr.install_id, number: cr.number, render_id: cr.render_id });
        await landRunningRestores(trx, repos, install.id);
        return reparent(trx, deps, next, await repos.head(install.id));
      });
      await ensureRef(repos, row).catch((err: unknown) => log.warn({ err, changeRequestId: row.id }, 'change request ref not mended'));
      return one(row);
    },
  };
}

export type ChangeRequestService = ReturnType<typeof createChangeRequestService>;
