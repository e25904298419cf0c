import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Clock } from '../shared/clock.js';
import { purgeExpiredKeys } from '../http/idempotency.js';
import type { JobDefinition, JobRunner } from './runner.js';

export const MAINTENANCE_PURGE = 'maintenance.purge';

/** Housekeeping every worker shares, hourly: expired idempotency keys and old finished jobs. */
export function maintenanceJobs(db: Kysely<DB>, clock: Clock, runner: Pick<JobRunner, 'purge'>): JobDefinition[] {
  return [
    {
      kind: MAINTENANCE_PURGE,
      everySeconds: 3600,
      run: async () => ({ idempotency_keys: await purgeExpiredKeys(db, clock), jobs: await runner.purge() }),
    },
  ];
}
