import type { Database } from '../../src/db/database.js';
import { waitFor } from './wait.js';

/**
 * Waits until at least `k` jobs of `kind` made after `sinceMs` have succeeded: proof that
 * periodic work (an expiry scan) really ran after some moment, so that a following "nothing
 * more was sent" is an observation rather than the hope that a fixed sleep was long enough.
 */
export async function jobsSucceededSince(database: Database, kind: string, sinceMs: number, k: number, what: string): Promise<void> {
  const since = () => database.db.selectFrom('jobs').select(['state']).where('kind', '=', kind).where('created_at', '>', sinceMs).execute();
  await waitFor(`${k} ${kind} jobs after ${what}`, async () => (await since()).filter((j) => j.state === 'succeeded').length >= k, {
    timeoutMs: 45_000,
    detail: async () => {
      const states = (await since()).map((j) => j.state);
      return `the ${kind} jobs made since: ${states.length ? states.join(', ') : 'none'}`;
    },
  });
}
