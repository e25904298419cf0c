import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { RepositoryStorage } from '../../git/repository-storage.js';
import { renderStore } from './store.js';
import { changeRequestStore } from '../changes/store.js';
import { BranchBusyError } from '../../git/branch-busy.js';

/**
 * A restore's commit is made and recorded before `main` moves: the database is the source of
 * truth. The request makes the commit object (parent: the head it read under the install's lock),
 * commits the render that names it, and only then moves `main`, by compare-and-swap from that
 * parent. A request that fails before its transaction commits leaves at most an unreachable
 * object (git's gc removes it), never a commit on `main` that no render names; one that dies
 * between its commit and the branch move leaves the move to whoever comes next: the restore's
 * job, or any other writer of the install's branch, since they all hold the install's lock and
 * land running restores first (`landRunningRestores`).
 *
 * - `landed`: `main` is at the commit or past it (it is in the history of `main`);
 * - `elsewhere`: `main` moved to a history without it (only possible if someone rewrote the
 *   branch behind the platform's back): it is never forced in, as that would drop commits;
 * - `busy`: another writer holds the branch's lock right now: try again later.
 */
export type Landing = 'landed' | 'elsewhere' | 'busy';

export async function landCommit(repos: RepositoryStorage, installId: string, commit: string): Promise<Landing> {
  const parent = await repos.parentOf(installId, commit);
  // Twice: a lost compare-and-swap is re-read once (another writer may have landed it meanwhile).
  for (let attempt = 0; attempt < 2; attempt++) {
    const head = await repos.head(installId);
    if (head === commit) return 'landed';
    if (head !== null && (await repos.isAncestor(installId, commit, head))) return 'landed';
    if (head !== parent) return 'elsewhere';
    if (await repos.advanceMain(installId, commit, parent)) return 'landed';
  }
  return 'busy';
}

/**
 * Lands the install's running restores, oldest first, then its merged change requests; call with the install locked, before
 * moving `main` (a render's commit) or reading its head as a parent (another restore), so that
 * no writer ever builds past a restore the database has but the branch has not yet. Returns
 * each one's landing; `busy` throws (nothing may build on the head while a restore waits).
 */
export async function landRunningRestores(trx: Kysely<DB>, repos: RepositoryStorage, installId: string): Promise<Map<string, Landing>> {
  const landings = new Map<string, Landing>();
  for (const r of await renderStore.runningRestores(trx, installId)) {
    const landing = await landCommit(repos, installId, r.commit_sha);
    if (landing === 'busy') throw new BranchBusyError(`main of ${installId} is locked by another writer; restore ${r.id} waits to land`);
    landings.set(r.id, landing);
  }
  // A merged change request's head is recorded before `main` moves to it, exactly as a restore's
  // commit (src/installs/changes/service.ts, merge): it lands the same way, and is then marked.
  for (const cr of await changeRequestStore.unlanded(trx, installId)) {
    const landing = await landCommit(repos, installId, cr.head_commit_sha);
    if (landing === 'busy') throw new BranchBusyError(`main of ${installId} is locked by another writer; change request ${cr.id} waits to land`);
    if (landing === 'landed') await changeRequestStore.update(trx, cr.id, { landed: 1 });
    landings.set(cr.id, landing);
  }
  return landings;
}
