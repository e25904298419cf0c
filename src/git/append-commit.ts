import type { RepositoryStorage } from './repository-storage.js';

/** Each lost race means another writer's commit landed, so this bounds waiting, not progress. */
const MAX_TRIES = 32;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Adds a commit with `tree` on top of `main`. The branch moves by compare-and-swap on the head
 * the commit was built on; when another writer got there first, the commit is rebuilt on the
 * new head and tried again, so each writer's commit stays in the history and none is lost.
 */
export async function appendCommit(repos: RepositoryStorage, repoId: string, c: { tree: string; message: string; timeSeconds: number }): Promise<{ commit: string; parent: string | null }> {
  for (let attempt = 1; attempt <= MAX_TRIES; attempt++) {
    const parent = await repos.head(repoId);
    const commit = await repos.commit(repoId, { ...c, parent });
    if (await repos.advanceMain(repoId, commit, parent)) return { commit, parent };
    // Jitter, so writers that lost together do not race again in lockstep.
    await pause(Math.random() * 10 * Math.min(attempt, 5));
  }
  throw new Error(`main of ${repoId} kept moving: gave up after ${MAX_TRIES} tries`);
}
