import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { InstallsTable, RendersTable } from './tables.js';
import type { ServiceDeps } from '../service-deps.js';
import type { Config } from '../config.js';
import { enforceQuota } from '../quotas/enforce.js';
import { newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { completeOperation, startOperation } from '../operations/service.js';
import { renderStore } from './renders/store.js';
import { installStore } from './store.js';
import { renderOutcome } from './renders/representation.js';
import { OP_INSTALL_RENDER, RENDER_RUN, type RenderJob } from './job-kinds.js';

/**
 * Supersedes the install's queued renders: a newer one is about to be made, so they will never
 * run. Their operations are done at once (their result says `superseded`); their jobs, when
 * they come, find nothing to do. Call with the install locked.
 */
export async function supersedeQueued(trx: Kysely<DB>, clock: Clock, installId: string, byRenderId: string): Promise<void> {
  const now = nowSeconds(clock);
  for (const r of await renderStore.queued(trx, installId)) {
    const moved = await renderStore.transition(trx, r.id, 'queued', {
      state: 'superseded',
      message: `Superseded by ${byRenderId} before it ran`,
      updated_at: now,
    });
    if (moved) await completeOperation(trx, clock, r.operation_id, { result: renderOutcome({ id: r.id, state: 'superseded', commit_sha: null }) });
  }
}

/**
 * Cancels every render of the install that is queued or running: the install is being deleted,
 * so none of them will ever be read through it, and its repository goes (docs/spec-gaps.md,
 * "Deleting an install and a package"). Each becomes `superseded` (the state that says "never reached the
 * branch, and never will") with a message that says why, and its operation is done at once. A
 * job still at work on one finds the render moved on at its next step and stops; the caller
 * waits for those jobs before removing the repository. Call with the install locked. Answers
 * the canceled renders' ids and operations.
 */
export async function cancelUnfinished(trx: Kysely<DB>, clock: Clock, installId: string): Promise<{ renderIds: string[]; operationIds: string[] }> {
  const now = nowSeconds(clock);
  const canceled = { renderIds: [] as string[], operationIds: [] as string[] };
  for (const r of await renderStore.unfinished(trx, installId)) {
    const moved = await renderStore.transition(trx, r.id, r.state, { state: 'superseded', message: 'Canceled: the install was deleted', updated_at: now });
    if (!moved) continue;
    canceled.renderIds.push(r.id);
    canceled.operationIds.push(r.operation_id);
    await completeOperation(trx, clock, r.operation_id, { result: renderOutcome({ id: r.id, state: 'superseded', commit_sha: null }) });
  }
  return canceled;
}

const HOUR = 3600;

/**
 * WSP_QUOTA_RENDERS_PER_HOUR: the workspace's renders of the last hour, counted in the
 * transaction that would add one, under the workspace's lock (taken after the install's, as
 * every caller holds it): requests at the same instant never pass the quota together.
 */
async function checkRenderQuota(trx: Kysely<DB>, config: Config, workspaceId: string, now: number): Promise<void> {
  const limit = config.quotas.rendersPerHour;
  const retryAfter = (made: { oldest: number | null }) => Math.max(1, (made.oldest ?? now) + HOUR - now);
  await enforceQuota(trx, workspaceId, {
    quota: 'renders_per_hour',
    limit,
    error: 'RENDER_QUOTA_EXCEEDED',
    count: () => renderStore.madeSince(trx, workspaceId, now - HOUR + 1),
    message: (made) => `The workspace has started ${made.count} renders in the last hour; its quota is ${limit} an hour (retry after ${retryAfter(made)} seconds)`,
    headers: (made) => ({ 'Retry-After': String(retryAfter(made)) }),
  });
}

/**
 * WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES: once the workspace's repositories, as last measured,
 * take the whole quota, no render can land (each one adds to a repository; only maintenance
 * shrinks one, pruning what failed renders left), so none is queued and no install (nor its
 * repository) is made: 409. Short of it, the render itself is judged when it has measured its
 * repository (src/installs/renders/jobs.ts).
 */
async function checkRepositorySpace(trx: Kysely<DB>, config: Config, workspaceId: string): Promise<void> {
  const limit = config.quotas.workspaceRepositoryBytes;
  await enforceQuota(trx, workspaceId, {
    quota: 'workspace_repository_bytes',
    limit,
    error: 'WORKSPACE_REPOSITORIES_FULL',
    count: async () => ({ count: await installStore.repositoryBytesTotal(trx, workspaceId) }),
    message: (used) => `The workspace's repositories take ${used.count} bytes, its whole quota of ${limit} bytes: no render could be kept`,
  });
}

/**
 * Queues a render of the install's desired state (in the caller's transaction, with the
 * install locked and `install.render_seq` as last read): it gets the next render number,
 * older queued renders are superseded, and a job and an operation follow it. Over the
 * workspace's renders-per-hour quota: a 429 ApiError; with its repositories' quota used up, a
 * 409 ApiError; and nothing is queued.
 */
export async function queueRender(
  trx: Kysely<DB>,
  { clock, jobs, config }: Pick<ServiceDeps, 'clock' | 'jobs' | 'config'>,
  install: Pick<InstallsTable, 'id' | 'workspace_id' | 'render_seq'>,
  desired: { versionId: string; valuesJson: string; authorId: string | null },
): Promise<RendersTable> {
  const now = nowSeconds(clock);
  await checkRenderQuota(trx, config, install.workspace_id, now);
  await checkRepositorySpace(trx, config, install.workspace_id);
  const id = newId('rnd');
  await supersedeQueued(trx, clock, install.id, id);
  const operationId = await startOperation(trx, clock, install.workspace_id, OP_INSTALL_RENDER);
  const row: RendersTable = {
    id,
    workspace_id: install.workspace_id,
    install_id: install.id,
    seq: install.render_seq + 1,
    package_version_id: desired.versionId,
    values_digest: await renderStore.keepValues(trx, install.id, desired.valuesJson),
    state: 'queued',
    render_hash: null,
    tree_sha: null,
    commit_sha: null,
    operation_id: operationId,
    restored_from_render_id: null,
    message: 'Waiting for a worker',
    created_at: now,
    updated_at: now,
    author_id: desired.authorId,
    change_request_id: null,
  };
  await renderStore.insert(trx, row);
  await installStore.update(trx, install.id, { render_seq: row.seq });
  const payload: RenderJob = { render_id: id };
  // Grouped by workspace: the render pool's slots hold at most the workspace's share of its renders (src/installs/job-definitions.ts).
  await jobs.enqueue(trx, { kind: RENDER_RUN, payload, operationId, group: install.workspace_id });
  return row;
}
