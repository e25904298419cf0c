import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Clock } from '../shared/clock.js';
import { purgeExpiredKeys } from '../http/idempotency.js';
import { purgeRequestWindows } from '../http/rate-limit.js';
import { nowSeconds } from '../shared/clock.js';
import type { JobDefinition, JobRunner } from './runner.js';

export const MAINTENANCE_PURGE = 'maintenance.purge';

/** Housekeeping every worker shares, hourly: expired idempotency keys, ended rate-limit windows and old finished jobs. */
export function maintenanceJobs(db: Kysely<DB>, clock: Clock, runner: Pick<JobRunner, 'purge'>): JobDefinition[] {
  return [
    {
      kind: MAINTENANCE_PURGE,
      everySeconds: 3600,
      run: async () => ({
        idempotency_keys: await purgeExpiredKeys(db, clock),
        request_windows: await purgeRequestWindows(db, nowSeconds(clock)),
        jobs: await runner.purge(),
      }),
    },
  ];
}
