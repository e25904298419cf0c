import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { ServiceDeps } from '../../service-deps.js';
import type { RepositoryStorage, TreeFile } from '../../git/repository-storage.js';
import type { EventSource } from '../../events/record.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import type { InstallView } from '../store.js';
import type { RendersTable, RepositoryChangeRequestsTable } from '../tables.js';
import { installStore } from '../store.js';
import { renderStore } from '../renders/store.js';
import { changeRequestStore } from './store.js';
import { newId } from '../../shared/ids.js';
import { nowSeconds } from '../../shared/clock.js';
import { newEtag } from '../../shared/etag.js';
import { notify } from '../../notifications/service.js';
import { identity } from '../../identity/service.js';

/**
 * The change requests' git and rows together (docs/spec-gaps.md, "Repository change requests"), for the render job, the restore
 * and the change requests' own routes. Every function here runs with the install locked (its row
 * lock is what orders every writer of its refs and rows). The database is the source of truth, as
 * for restores (src/installs/renders/landing.ts): commit objects are written before the
 * transaction commits (an orphaned object is harmless, gc prunes it), refs move only after it
 * commits, and whoever comes next mends a ref a crash left behind (`ensureRef`, landings).
 */
export type ChangeDeps = Pick<ServiceDeps, 'clock' | 'events'> & { repos: RepositoryStorage };

export const changeRef = (number: number) => `refs/changes/${number}`;

/** Who an event of the platform's own making is by: the render's author (a user or a token), else the platform. */
export function sourceOfAuthor(workspaceId: string, authorId: string | null): EventSource {
  if (authorId === null) return { workspaceId, actor: { kind: 'system', id: null }, credentialId: null };
  return { workspaceId, actor: { kind: authorId.startsWith('tok_') ? 'api_token' : 'user', id: authorId }, credentialId: null };
}

export interface FileChange {
  path: string;
  status: 'added' | 'modified' | 'removed';
  before: Buffer | null;
  after: Buffer | null;
}

/** The files of two trees that differ, in path order (a null base: an empty tree). */
export async function treeChanges(repos: RepositoryStorage, installId: string, baseTree: string | null, headTree: string): Promise<FileChange[]> {
  const before = baseTree === null ? [] : await repos.readTree(installId, baseTree);
  const after = baseTree === headTree ? before : await repos.readTree(installId, headTree);
  const left = new Map(before.map((f: TreeFile) => [f.path, f.content]));
  const right = new Map(after.map((f: TreeFile) => [f.path, f.content]));
  const paths = [...new Set([...left.keys(), ...right.keys()])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: FileChange[] = [];
  for (const path of paths) {
    const b = left.get(path) ?? null;
    const a = right.get(path) ?? null;
    if (b && a && b.equals(a)) continue;
    out.push({ path, status: b === null ? 'added' : a === null ? 'removed' : 'modified', before: b, after: a });
  }
  return out;
}

async function diffStats(repos: RepositoryStorage, installId: string, baseCommit: string, headTree: string) {
  const changes = await treeChanges(repos, installId, await repos.treeOf(installId, baseCommit), headTree);
  const count = (s: FileChange['status']) => changes.filter((c) => c.status === s).length;
  return { diff_added: count('added'), diff_modified: count('modified'), diff_removed: count('removed') };
}

/**
 * Supersedes the install's open change requests: a newer render (`byRender`) is reaching `main`
 * or opening its own. Each becomes `superseded` with its render; the event is by the newer
 * render's author.
 */
export async function supersedeOpen(trx: Kysely<DB>, deps: ChangeDeps, installId: string, byRender: Pick<RendersTable, 'id' | 'workspace_id' | 'author_id'>): Promise<void> {
  const now = nowSeconds(deps.clock);
  for (const cr of await changeRequestStore.openOf(trx, installId)) {
    if (!(await changeRequestStore.transition(trx, cr.id, cr, { state: 'superseded', etag: newEtag(), updated_at: now }))) continue;
    await renderStore.transition(trx, cr.render_id, 'awaiting_merge', {
      state: 'superseded',
      message: `Superseded by ${byRender.id}: change request #${cr.number} will not be merged`,
      updated_at: now,
    });
    await deps.events.record(trx, sourceOfAuthor(byRender.workspace_id, byRender.author_id), 'repository_change_request.superseded', cr.id, {
      install_id: installId,
      number: cr.number,
      render_id: cr.render_id,
      superseded_by_render_id: byRender.id,
    });
  }
}

/**
 * The install is being deleted (docs/spec-gaps.md, "Repository change requests"): its open change
 * request will never be merged, so it ends as a `:close` ends one, in the deletion's transaction:
 * `closed`, its render `canceled`, the event `repository_change_request.closed` by whoever deleted
 * the install (`data.install_deleted`). It stays readable by id, as the install's renders do.
 * Answers the ids of the change requests closed.
 */
export async function closeOpenOfDeleted(trx: Kysely<DB>, deps: Pick<ChangeDeps, 'clock' | 'events'>, by: WorkspaceContext, installId: string): Promise<string[]> {
  const now = nowSeconds(deps.clock);
  const closed: string[] = [];
  for (const cr of await changeRequestStore.openOf(trx, installId)) {
    if (!(await changeRequestStore.transition(trx, cr.id, cr, { state: 'closed', closed_at: now, etag: newEtag(), updated_at: now }))) continue;
    await renderStore.transition(trx, cr.render_id, 'awaiting_merge', { state: 'canceled', message: `Canceled: the install was deleted, change request #${cr.number} was closed`, updated_at: now });
    await deps.events.record(trx, by, 'repository_change_request.closed', cr.id, { install_id: installId, number: cr.number, render_id: cr.render_id, install_deleted: true });
    closed.push(cr.id);
  }
  return closed;
}

/** The words a change request is titled with when nobody has given it a title. */
export function defaultTitle(install: Pick<InstallView, 'name' | 'current_version_id'>, render: Pick<RendersTable, 'package_version_id' | 'restored_from_render_id'>, semver: string): string {
  if (render.restored_from_render_id) return `Restore render ${render.restored_from_render_id}`;
  if (install.current_version_id !== render.package_version_id) return `Update ${install.name} to ${semver}`;
  return `Update the values of ${install.name} (${semver})`;
}

/**
 * Opens a change request for a render whose tree is written (`render.tree_sha`): a commit of that
 * tree on the current head of `main` (`head`, read under the install's lock after landings), the
 * open change request it supersedes, the row, the render `awaiting_merge`, the event and the
 * notices. Answers the row; the caller moves `refs/changes/<number>` once the transaction commits.
 */
export async function openChangeRequest(
  trx: Kysely<DB>,
  deps: ChangeDeps,
  install: InstallView,
  render: RendersTable,
  c: { tree: string; renderHash: string | null; head: string; commitMessage: string; semver: string },
): Promise<RepositoryChangeRequestsTable> {
  const now = nowSeconds(deps.clock);
  const commit = await deps.repos.commit(install.id, { tree: c.tree, parent: c.head, message: c.commitMessage, timeSeconds: now });
  await supersedeOpen(trx, deps, install.id, render);
  const row: RepositoryChangeRequestsTable = {
    id: newId('rcr'),
    workspace_id: install.workspace_id,
    install_id: install.id,
    number: install.change_request_seq + 1,
    title: defaultTitle(install, render, c.semver),
    description: '',
    state: 'open',
    render_id: render.id,
    author_id: render.author_id,
    base_commit_sha: c.head,
    head_commit_sha: commit,
    tree_sha: c.tree,
    ...(await diffStats(deps.repos, install.id, c.head, c.tree)),
    merged_by: null,
    merged_at: null,
    closed_at: null,
    landed: 0,
    etag: newEtag(),
    created_at: now,
    updated_at: now,
  };
  await changeRequestStore.insert(trx, row);
  await installStore.update(trx, install.id, { change_request_seq: row.number });
  const moved = await renderStore.transition(trx, render.id, render.state, {
    state: 'awaiting_merge',
    tree_sha: c.tree,
    render_hash: c.renderHash,
    commit_sha: null,
    change_request_id: row.id,
    message: `Awaiting merge of change request #${row.number}`,
    updated_at: now,
  });
  if (!moved) throw new Error(`render ${render.id} moved on while its change request was opened`);
  await deps.events.record(trx, sourceOfAuthor(install.workspace_id, render.author_id), 'repository_change_request.opened', row.id, {
    install_id: install.id,
    number: row.number,
    render_id: render.id,
    head_commit_sha: commit,
    base_commit_sha: c.head,
  });
  const recipients = (await identity.usersWithRoles(trx, install.workspace_id, ['owner', 'admin'])).filter((u) => u !== render.author_id);
  if (recipients.length > 0) {
    await notify(trx, deps.clock, {
      userIds: recipients,
      type: 'change_request_opened',
      resource_type: 'repository_change_request',
      resource_id: row.id,
      title: `Change request #${row.number} of ${install.name}: ${row.title}`,
      body: `A render of ${install.name} waits for review before it reaches main (${row.diff_added} added, ${row.diff_modified} modified, ${row.diff_removed} removed).`,
      severity: 'info',
      context: { workspace_id: install.workspace_id, install_id: install.id, repository_change_request_id: row.id, number: row.number },
      dedupeKey: `change_request_opened:${row.id}`,
    });
  }
  return row;
}

/**
 * An open change request built on a head `main` has left (an operator's repair moved it): its
 * tree on a new commit whose parent is the head now, a new base and etag. Answers the row as it
 * now is (the caller moves the ref after its commit), or the row itself when nothing moved.
 */
export async function reparent(trx: Kysely<DB>, deps: ChangeDeps, cr: RepositoryChangeRequestsTable, head: string | null): Promise<RepositoryChangeRequestsTable> {
  if (cr.state !== 'open' || head === null || head === cr.base_commit_sha) return cr;
  const message = await deps.repos.commitMessage(cr.install_id, cr.head_commit_sha);
  const now = nowSeconds(deps.clock);
  const commit = await deps.repos.commit(cr.install_id, { tree: cr.tree_sha, parent: head, message, timeSeconds: now });
  const fields = { base_commit_sha: head, head_commit_sha: commit, ...(await diffStats(deps.repos, cr.install_id, head, cr.tree_sha)), etag: newEtag(), updated_at: now };
  await changeRequestStore.update(trx, cr.id, fields);
  return { ...cr, ...fields };
}

/** Points `refs/changes/<number>` at the change request's head, if a crash or a re-parent left it elsewhere. */
export async function ensureRef(repos: RepositoryStorage, cr: Pick<RepositoryChangeRequestsTable, 'install_id' | 'number' | 'head_commit_sha'>): Promise<void> {
  const ref = changeRef(cr.number);
  if ((await repos.readRef(cr.install_id, ref)) !== cr.head_commit_sha) await repos.setRef(cr.install_id, ref, cr.head_commit_sha);
}
