import type { WorkspaceContext } from '../auth/principal.js';
import type { RendersTable } from './tables.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, notFound } from '../shared/errors.js';
import { newEtag, assertIfMatch } from '../shared/etag.js';
import { startOperation } from '../operations/service.js';
import { packageStore } from './packages/store.js';
import { renderStore } from './renders/store.js';
import { toRender } from './renders/representation.js';
import { commitMessage, commitSubject } from './renders/commit-message.js';
import { landCommit, landRunningRestores } from './renders/landing.js';
import { OP_INSTALL_RESTORE, RENDER_RESTORE, type RenderJob } from './job-kinds.js';
import { installStore } from './store.js';
import { supersedeQueued } from './render-queue.js';
import { toRestoredInstall } from './representation.js';
import { Slots } from '../shared/slots.js';
import type { InstallServiceDeps } from './service.js';
import { writeTransaction } from '../db/write-transaction.js';
import { completeOperation } from '../operations/service.js';
import { renderOutcome } from './renders/representation.js';
import { ensureRef, openChangeRequest, supersedeOpen } from './changes/machinery.js';
import type { RepositoryChangeRequestsTable } from './tables.js';

/**
 * POST /v1/installs/{id}:restore, as Helm's rollback: a restore is a new render whose commit
 * holds the old render's tree on top of the current head. Nothing is rewritten.
 *
 * The database is the source of truth (src/installs/renders/landing.ts): under the install's lock the
 * commit object is made on the current head without moving `main`, the render that names it and
 * its job are committed, and only then does `main` move, by compare-and-swap from that head. A
 * transaction that fails leaves `main` as it was (a retry with the same Idempotency-Key makes
 * the one commit); a process that dies after it committed leaves the move to the restore's job.
 */
export function createRestoreService(deps: InstallServiceDeps) {
  const { db, clock, jobs, repos, log, events } = deps;

  /** The spec's order: unknown (404), another package's (422), another install's (404), not succeeded (409). */
  async function restorable(ctx: WorkspaceContext, install: { id: string; package_id: string }, rawRenderId: string): Promise<RendersTable> {
    const path = ['body', 'render_id'];
    const source = await renderStore.get(db, ctx.workspaceId, canonicalId('rnd', rawRenderId));
    if (!source) throw notFound('render', path);
    const version = await packageStore.getVersion(db, ctx.workspaceId, source.package_version_id);
    if (version?.package_id !== install.package_id) throw new ApiError('RENDER_OF_OTHER_PACKAGE', { path });
    if (source.install_id !== install.id) throw new ApiError('NOT_FOUND', { message: 'The render is not a render of this install', path });
    if (source.state !== 'succeeded' || !source.commit_sha) {
      throw new ApiError('RENDER_NOT_SUCCEEDED', { message: `Only a succeeded render can be restored; this one is ${source.state}`, path, metadata: { state: source.state } });
    }
    return source;
  }

  /**
   * A restore costs milliseconds of this process's one thread (git objects, a transaction, the
   * branch move): one at a time keeps a burst of them from starving every other request. Eight
   * clients restoring at once tripled the p99 of other writers; two at a time, 2.2×; one, 1.6×
   * (docs/benchmarks.md, the restore storm). And between two restores of a queue, a rest of half
   * the first one's time (at most 100 ms): a storm's restores took the thread back to back, from
   * one to the next, and other writers' p99 rose 1.4-2.1× (1.1-1.4× with the rest; round nine). A
   * restore that finds no other waiting starts at once.
   */
  const slots = new Slots(RESTORES_AT_ONCE, REST_BETWEEN_RESTORES);

  return {
    restore: (ctx: WorkspaceContext, rawInstallId: string, rawRenderId: string, ifMatch: string) => slots.run(() => restore(ctx, rawInstallId, rawRenderId, ifMatch)),
  };

  async function restore(ctx: WorkspaceContext, rawInstallId: string, rawRenderId: string, ifMatch: string) {
    const found = await installStore.get(db, ctx.workspaceId, canonicalId('inst', rawInstallId));
    if (!found) throw notFound('install');
    const source = await restorable(ctx, found, rawRenderId);
    const version = (await packageStore.getVersion(db, ctx.workspaceId, source.package_version_id))!;
    const pkg = (await packageStore.get(db, ctx.workspaceId, found.package_id))!;

    // The commit object is made before the transaction, on the head as it is now: objects are
    // content-addressed, so one a failed or raced request leaves behind is harmless (gc prunes
    // it), and SQLite's write lock is never held while the repository is written.
    assertIfMatch(ifMatch, found.etag); // again under the lock; first here, so a stale one writes nothing
    const now = nowSeconds(clock);
    const id = newId('rnd');
    const subject = { renderId: id, installId: found.id, packageName: pkg.name, semver: version.semver, versionId: version.id, restoredFromRenderId: source.id };
    const tree = source.tree_sha ?? (await repos.treeOf(found.id, source.commit_sha!));
    const made = { parent: await repos.head(found.id), commit: '' };
    made.commit = await repos.commit(found.id, { tree, parent: made.parent, message: commitMessage(subject), timeSeconds: now });

    let opened: RepositoryChangeRequestsTable | null = null;
    const answer = await writeTransaction(db, ctx, async (trx) => {
      const install = await installStore.lock(trx, found.id);
      if (!install) throw notFound('install');
      assertIfMatch(ifMatch, install.etag);
      // A restore whose request died before moving main goes first: ours builds on it.
      await landRunningRestores(trx, repos, install.id);
      // Under the install's lock the head is settled; another writer moved it since: rebuild on it.
      const parent = await repos.head(install.id);
      const commit = parent === made.parent ? made.commit : await repos.commit(install.id, { tree, parent, message: commitMessage(subject), timeSeconds: now });

      await supersedeQueued(trx, clock, install.id, id);
      const operationId = await startOperation(trx, clock, ctx.workspaceId, OP_INSTALL_RESTORE);
      const render: RendersTable = {
        id,
        workspace_id: ctx.workspaceId,
        install_id: install.id,
        seq: install.render_seq + 1,
        package_version_id: source.package_version_id,
        values_digest: source.values_digest,
        state: 'running',
        render_hash: source.render_hash,
        tree_sha: tree,
        commit_sha: commit,
        operation_id: operationId,
        restored_from_render_id: source.id,
        message: commitSubject(subject),
        created_at: now,
        updated_at: now,
        author_id: ctx.actorId,
        change_request_id: null,
      };
      // docs/spec-gaps.md, "Repository change requests": under review a restore is a render like any other: its tree waits on a
      // change request (no job: nothing is left to do once it is open, so its operation is done).
      const reviewed = install.delivery === 'change_request' && parent !== null;
      if (reviewed) {
        render.commit_sha = null;
        render.operation_id = operationId;
      }
      await renderStore.insert(trx, render);
      if (reviewed) {
        opened = await openChangeRequest(trx, deps, install, render, { tree, renderHash: source.render_hash, head: parent, commitMessage: commitMessage(subject), semver: version.semver });
        Object.assign(render, { state: 'awaiting_merge', commit_sha: null, change_request_id: opened.id, message: `Awaiting merge of change request #${opened.number}` });
        await completeOperation(trx, clock, operationId, { result: renderOutcome(render) });
      } else {
        // A newer render reaches main: an open change request will never be merged.
        await supersedeOpen(trx, deps, install.id, render);
      }
      // As Helm's rollback: the install now wants what produced that tree, version and values.
      await installStore.update(trx, install.id, {
        desired_version_id: source.package_version_id,
        values_json: await renderStore.valuesOf(trx, source),
        render_seq: render.seq,
        etag: newEtag(),
        updated_at: now,
      });
      const payload: RenderJob = { render_id: id };
      if (!reviewed) await jobs.enqueue(trx, { kind: RENDER_RESTORE, payload, operationId });
      await events.record(trx, ctx, 'install.restored', install.id, {
        render_id: id,
        restored_from_render_id: source.id,
        commit_sha: render.commit_sha,
        operation_id: operationId,
        repository_change_request_id: render.change_request_id,
      });
      const updated = (await installStore.get(trx, ctx.workspaceId, install.id))!;
      return { install: toRestoredInstall(updated), render: toRender(render) };
    });
    // Committed: the answer stands whatever happens to the branch move now. Failing here would
    // be a 5xx, which the idempotency layer does not keep, and a retry would restore twice.
    const { render } = answer;
    if (opened) {
      try {
        await ensureRef(repos, opened);
      } catch (err) {
        log.warn({ err, installId: render.install_id, changeRequestId: (opened as RepositoryChangeRequestsTable).id }, 'change request ref not written yet; its next reader writes it');
      }
      return answer;
    }
    try {
      const landing = await landCommit(repos, render.install_id, render.commit_sha!);
      if (landing !== 'landed') log.warn({ installId: render.install_id, renderId: render.id, landing }, 'restore commit not on main yet; its job lands it');
    } catch (err) {
      log.warn({ err, installId: render.install_id, renderId: render.id }, 'restore commit not on main yet; its job lands it');
    }
    return answer;
  }
}

const RESTORES_AT_ONCE = 1;
/** Of the time the restore before took. */
const REST_BETWEEN_RESTORES = 0.5;

export type RestoreService = ReturnType<typeof createRestoreService>;
