import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { RendersTable } from '../tables.js';
import type { ServiceDeps } from '../../service-deps.js';
import type { RepositoryStorage } from '../../git/repository-storage.js';
import { appendCommit } from '../../git/append-commit.js';
import { RepositoryVolumeError } from '../../git/volume.js';
import type { Job, JobDefinition } from '../../jobs/runner.js';
import { PermanentJobError, RetryLaterError } from '../../jobs/failure.js';
import { nowSeconds } from '../../shared/clock.js';
import { ErrorCodes } from '../../shared/errors.js';
import { newEtag } from '../../shared/etag.js';
import { packageStore } from '../packages/store.js';
import { MAX_RENDER_STEPS, TemplateRenderError } from '../packages/templates.js';
import { renderPoolFor, WorkspaceRendersBusy } from './render-pool.js';
import { installStore, type InstallView } from '../store.js';
import { renderStore } from './store.js';
import { commitMessage, commitSubject, renderIdOf } from './commit-message.js';
import { renderOutcome } from './representation.js';
import { RENDER_MAX_ATTEMPTS, RENDER_RESTORE, RENDER_RUN, type RenderJob } from '../job-kinds.js';
import { landRunningRestores } from './landing.js';
import { identity } from '../../identity/service.js';
import { changeRequestStore } from '../changes/store.js';
import { ensureRef, openChangeRequest, supersedeOpen } from '../changes/machinery.js';

/** How long a render waits for the repositories' volume before it fails (7058). */
const VOLUME_WAIT_LIMIT_MS = 60 * 60_000;
const VOLUME_RETRY_MIN_MS = 1000;
const VOLUME_RETRY_MAX_MS = 60_000;

type Deps = Pick<ServiceDeps, 'db' | 'clock' | 'log' | 'config' | 'events'> & { repos: RepositoryStorage };

/**
 * The render jobs. Both may run more than once (a worker that dies loses its lease), so each
 * step checks the render's state first and moves it with compare-and-swap. Renders of one
 * install reach `main` in the order they were made: the commit is made with the install
 * locked, and a render that finds a newer one already committed is superseded instead.
 */
export function renderJobs(deps: Deps): JobDefinition<RenderJob>[] {
  const { db, clock, repos, log, config } = deps;
  const pool = renderPoolFor(config.renders);

  async function fail(id: string, message: string): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const row = await renderStore.byId(trx, id);
      if (row?.state === 'queued' || row?.state === 'running') {
        await renderStore.transition(trx, id, row.state, { state: 'failed', message: message.slice(0, 1000), updated_at: nowSeconds(clock) });
      }
    });
  }

  /** Marks the render succeeded and, unless a newer render got there first, moves current_version. */
  async function succeed(trx: Kysely<DB>, install: InstallView, render: RendersTable, fields: Pick<RendersTable, 'commit_sha' | 'tree_sha' | 'render_hash' | 'message'>) {
    const now = nowSeconds(clock);
    await renderStore.transition(trx, render.id, 'running', { state: 'succeeded', ...fields, updated_at: now });
    if (render.seq > install.current_render_seq) {
      const moved = install.current_version_id !== render.package_version_id;
      await installStore.update(trx, install.id, {
        current_version_id: render.package_version_id,
        current_render_seq: render.seq,
        ...(moved ? { etag: newEtag(), updated_at: now } : {}),
      });
    }
    return renderOutcome({ id: render.id, state: 'succeeded', commit_sha: fields.commit_sha });
  }

  /**
   * Runs a handler; on its last attempt a failure that is not the render's own marks it failed.
   * What went wrong (git's stderr names server paths) goes to the log, not to the caller.
   */
  const guarded = (work: (id: string) => Promise<unknown>) => async (job: Job<RenderJob>) => {
    try {
      return await work(job.payload.render_id);
    } catch (err) {
      if (err instanceof PermanentJobError || err instanceof RetryLaterError) throw err;
      // Whatever failed (a write's errno, git's exit status, a repository not found), a volume
      // that is missing, read-only or full is the cause to report, and to wait out.
      const volume = err instanceof RepositoryVolumeError ? err : await repos.problem().catch(() => null);
      if (volume) return waitForVolume(job, volume);
      if (job.attempt < RENDER_MAX_ATTEMPTS) throw err;
      log.error({ err, render: job.payload.render_id, job: job.id }, 'render gave up');
      const message = `Gave up after ${job.attempt} attempts: the repository or the database could not be written (see the server log)`;
      await fail(job.payload.render_id, message);
      throw new PermanentJobError(message);
    }
  };

  /**
   * A render the repositories' volume cannot take now is retried, its attempts not counted,
   * sooner at first and then at most every minute (an operator remounts or frees a disk in
   * minutes; five counted attempts with backoff would give up after 15 s). The render says why
   * it waits; after VOLUME_WAIT_LIMIT_MS it fails with that reason as its operation's error.
   */
  async function waitForVolume(job: Job<RenderJob>, volume: RepositoryVolumeError): Promise<never> {
    const id = job.payload.render_id;
    const render = await renderStore.byId(db, id).catch(() => undefined);
    const waitedMs = render ? Math.max(0, clock.nowMs() - render.created_at * 1000) : 0;
    if (waitedMs >= VOLUME_WAIT_LIMIT_MS) {
      const message = `${volume.message}: gave up after waiting ${Math.round(waitedMs / 60_000)} minutes for it`;
      log.error({ render: id, job: job.id, problem: volume.problem }, 'render gave up waiting for the repository volume');
      await fail(id, message);
      throw new PermanentJobError(message, ErrorCodes.REPOSITORY_UNAVAILABLE.code);
    }
    const delayMs = Math.round(Math.min(VOLUME_RETRY_MAX_MS, Math.max(VOLUME_RETRY_MIN_MS, waitedMs / 4)) * (0.8 + Math.random() * 0.4));
    // A restore's message is its commit's subject, which its success keeps: only the log says it waits.
    if (render && !render.restored_from_render_id && (render.state === 'queued' || render.state === 'running')) {
      const message = `Waiting: ${volume.message}; retried in ${Math.ceil(delayMs / 1000)} s`;
      // On a full disk the database may have no room for this either: the job waits all the same.
      await renderStore.transition(db, id, render.state, { message, updated_at: nowSeconds(clock) }).catch(() => false);
    }
    log.warn({ render: id, job: job.id, problem: volume.problem, retryInMs: delayMs }, 'render waits for the repository volume');
    throw new RetryLaterError(volume.message, clock.nowMs() + delayMs);
  }

  /**
   * The install's repository is made after its creation commits (src/installs/service.ts); if
   * that failed or the process died first, the first render makes it. Only then: a missing
   * repository of an install that already has commits is lost history, never made again empty.
   */
  async function ensureRepository(installId: string): Promise<void> {
    if (await repos.exists(installId)) return;
    if (await renderStore.lastCommitted(db, installId)) throw new Error(`the repository of ${installId} is missing, but the install has commits: not made again`);
    await repos.create(installId);
  }

  async function run(id: string): Promise<unknown> {
    const found = await renderStore.byId(db, id);
    if (!found) throw new PermanentJobError(`render ${id} does not exist`);
    // Taking it may fail: it can be superseded between the job's claim and here. Taken, the row is
    // the one read with the fields just written: reading it again cost a round trip a render.
    let render = found;
    if (found.state === 'queued') {
      const taken = { state: 'running' as const, message: 'Rendering', updated_at: nowSeconds(clock) };
      render = (await renderStore.transition(db, id, 'queued', taken)) ? { ...found, ...taken } : (await renderStore.byId(db, id))!;
    }
    if (render.state === 'awaiting_merge' && render.change_request_id) {
      // An attempt opened its change request and died before its ref moved: the ref is mended here.
      const cr = await changeRequestStore.byId(db, render.change_request_id);
      if (cr?.state === 'open') await ensureRef(repos, cr);
    }
    if (render.state !== 'running') return renderOutcome(render);
    await ensureRepository(render.install_id);

    const version = (await packageStore.getVersion(db, render.workspace_id, render.package_version_id))!;
    const pkg = (await packageStore.get(db, render.workspace_id, version.package_id))!;
    const values = await renderStore.valuesOf(db, render);
    const budget = { maxSteps: MAX_RENDER_STEPS, maxOutputBytes: config.quotas.renderOutputBytes };
    let tree: string, hash: string, measured: number;
    try {
      // The render's thread writes its objects (content-addressed: a retry writing them again changes nothing).
      ({ tree, renderHash: hash, repositoryBytes: measured } = await repos.writeTreeWith(render.install_id, (gitDir) => pool.renderInto(render.workspace_id, version.files, values, budget, gitDir)));
    } catch (err) {
      // Its turn comes when one of the workspace's renders ends; the attempt is not counted.
      if (err instanceof WorkspaceRendersBusy) throw new RetryLaterError(err.message, clock.nowMs() + 500 + Math.floor(Math.random() * 1000));
      if (!(err instanceof TemplateRenderError)) throw err;
      await fail(id, err.message);
      throw new PermanentJobError(err.message, ErrorCodes.RENDER_FAILED.code);
    }
    // Measured by the render's thread with its objects written: what the repository takes if it
    // lands. Over the quota, they stay unreferenced until the repository maintenance prunes them.
    const repositoryBytes = measured;
    if (repositoryBytes > config.quotas.repositoryBytes) {
      const message = `the install's repository would take ${repositoryBytes} bytes, more than the workspace's quota of ${config.quotas.repositoryBytes} bytes per install`;
      await fail(id, message);
      throw new PermanentJobError(message, ErrorCodes.RENDER_FAILED.code);
    }
    const overWorkspaceQuota = await claimRepositoryBytes(render.workspace_id, render.install_id, repositoryBytes);
    if (overWorkspaceQuota) {
      await fail(id, overWorkspaceQuota);
      throw new PermanentJobError(overWorkspaceQuota, ErrorCodes.RENDER_FAILED.code);
    }
    const subject = { renderId: id, installId: render.install_id, packageName: pkg.name, semver: version.semver, versionId: version.id };

    const done = await db.transaction().execute(async (trx) => {
      const install = (await installStore.lock(trx, render.install_id))!;
      const current = (await renderStore.byId(trx, id))!;
      if (current.state !== 'running') return { outcome: renderOutcome(current) };
      const last = await renderStore.lastCommitted(trx, install.id);
      if (last && last.seq > current.seq) {
        await renderStore.transition(trx, id, 'running', { state: 'superseded', message: `Superseded by ${last.id}, which reached the branch first`, updated_at: nowSeconds(clock) });
        return { outcome: renderOutcome({ id, state: 'superseded', commit_sha: null }) };
      }
      // A restore (or a merge) the database has but the branch not yet lands first: this commit follows it.
      await landRunningRestores(trx, repos, install.id);
      // An earlier attempt may have moved the branch and then lost its database write.
      const head = await repos.head(install.id);
      const ours = head !== null && renderIdOf(await repos.commitMessage(install.id, head)) === id;
      // docs/spec-gaps.md, "Repository change requests": under review, the tree waits on a change request; the first render (an
      // empty repository has nothing to review) and a commit already on main land directly.
      if (!ours && head !== null && install.delivery === 'change_request') {
        const cr = await openChangeRequest(trx, deps, install, current, { tree, renderHash: hash, head, commitMessage: commitMessage(subject), semver: version.semver });
        return { outcome: renderOutcome({ id, state: 'awaiting_merge', commit_sha: null, change_request_id: cr.id }), cr };
      }
      // Landing directly is a newer render reaching main: an open change request will never be merged.
      await supersedeOpen(trx, deps, install.id, current);
      const commit = ours ? head : (await appendCommit(repos, install.id, { tree, message: commitMessage(subject), timeSeconds: nowSeconds(clock) })).commit;
      return { outcome: await succeed(trx, install, current, { commit_sha: commit, tree_sha: tree, render_hash: hash, message: commitSubject(subject) }) };
    });
    // The ref moves once the change request is committed: a crash first leaves a row whose ref the retry (above) or any reader mends.
    if (done.cr) await ensureRef(repos, done.cr);
    return done.outcome;
  }

  /**
   * WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES: the workspace's repositories together, with this one at
   * `bytes` (measured with the render's objects written). Counted under the workspace's lock
   * (taken after the install's, as every caller takes them) in the transaction that records the
   * new size, so renders of two installs landing at once are judged one after the other, never
   * both against the total before either; a transaction of its own, so that the workspace's lock
   * is not held while git commits. The size recorded is the disk's, whether or not the render
   * then lands. Answers why the render fails, or null.
   */
  async function claimRepositoryBytes(workspaceId: string, installId: string, bytes: number): Promise<string | null> {
    const limit = config.quotas.workspaceRepositoryBytes;
    return db.transaction().execute(async (trx) => {
      await installStore.lock(trx, installId);
      await identity.lockWorkspace(trx, workspaceId);
      const total = (await installStore.repositoryBytesTotal(trx, workspaceId, installId)) + bytes;
      if (total > limit) return `the workspace's repositories would take ${total} bytes together, more than its quota of ${limit} bytes`;
      await installStore.update(trx, installId, { repository_bytes: bytes });
      return null;
    });
  }

  /**
   * Completes a restore: its commit (made and recorded by the request) reaches `main` if the
   * request could not move it there (it died, or the branch was locked), by compare-and-swap
   * from the commit's parent, never by force; then it must hold exactly the restored render's
   * tree and be in the history of `main`.
   */
  async function completeRestore(id: string): Promise<unknown> {
    const render = await renderStore.byId(db, id);
    if (!render) throw new PermanentJobError(`render ${id} does not exist`);
    if (render.state !== 'running') return renderOutcome(render);
    const source = (await renderStore.byId(db, render.restored_from_render_id!))!;
    const installId = render.install_id;
    // Objects never change: the tree is checked before the install is locked.
    const tree = await repos.treeOf(installId, render.commit_sha!);
    const sourceTree = await repos.treeOf(installId, source.commit_sha!);
    // A tree's id is the hash of its files: the same id is the same files, and so the same
    // render_hash as the source's (reading every file back to hash it again proved nothing more).
    const wrongTree = tree !== sourceTree;
    const hash = source.render_hash;
    const outcome = await db.transaction().execute(async (trx): Promise<{ done: unknown } | { problem: string }> => {
      const install = (await installStore.lock(trx, installId))!;
      const current = (await renderStore.byId(trx, id))!;
      if (current.state !== 'running') return { done: renderOutcome(current) };
      const landing = wrongTree ? null : (await landRunningRestores(trx, repos, installId)).get(id);
      const problem = wrongTree
        ? `commit ${current.commit_sha} does not hold the tree of ${source.id}`
        : landing !== 'landed'
          ? `commit ${current.commit_sha} is not in the history of main, which moved elsewhere; it was not forced in`
          : null;
      if (problem) {
        await renderStore.transition(trx, id, 'running', { state: 'failed', message: problem, updated_at: nowSeconds(clock) });
        return { problem };
      }
      return { done: await succeed(trx, install, current, { commit_sha: current.commit_sha, tree_sha: tree, render_hash: hash, message: current.message }) };
    });
    if ('problem' in outcome) throw new PermanentJobError(outcome.problem, ErrorCodes.RESTORE_VERIFICATION_FAILED.code);
    return outcome.done;
  }

  /** A job whose worker died on every attempt (killed, out of memory) is given up: so is its render. */
  const onGiveUp = async (job: Job<RenderJob>, reason: string) => fail(job.payload.render_id, reason);

  return [
    { kind: RENDER_RUN, run: guarded(run), onGiveUp },
    { kind: RENDER_RESTORE, run: guarded(completeRestore), onGiveUp },
  ];
}
