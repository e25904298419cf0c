import type { ServiceDeps } from '../deps.js';
import { purgeExpiredKeys } from '../http/idempotency.js';

/** Housekeeping every worker shares: expired idempotency keys and old finished jobs. */
export function registerMaintenance({ db, clock, jobs }: Pick<ServiceDeps, 'db' | 'clock' | 'jobs'>): void {
  jobs.register('maintenance.purge', async () => {
    const keys = await purgeExpiredKeys(db, clock);
    const finished = await jobs.purge();
    return { idempotency_keys: keys, jobs: finished };
  }, { maxAttempts: 1 });
  jobs.every('maintenance.purge', 3600);
}
