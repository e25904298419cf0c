import type { JobKinds } from './jobs/queue.js';
import { MAINTENANCE_PURGE } from './jobs/maintenance.js';
import { JOB as COMPUTE, MACHINE_JOB_ATTEMPTS, MACHINE_JOB_MAX_RUNS } from './compute/jobs/kinds.js';
import { CHANGE_REQUEST_LAND, INSTALL_REPOSITORY_DELETE, RENDER_MAX_ATTEMPTS, RENDER_RESTORE, RENDER_RUN, REPOSITORY_MAINTENANCE, VERSION_PUBLISHED } from './installs/job-kinds.js';
import { PURGE_DEVICE_LOGINS } from './oauth/job-kinds.js';
import { PURGE_SIGN_IN_WINDOWS } from './accounts/job-kinds.js';
import { PURGE_AUDIT_EVENTS } from './audit/job-kinds.js';
import { WEBHOOK_DELIVER } from './webhooks/job-kinds.js';

/**
 * Every kind of background job, and the attempts each gets before it fails for good. The one
 * table every enqueue reads (src/jobs/queue.ts): the server's requests, the jobs themselves and
 * the operator commands queue a kind the same way. Periodic work runs once per period: a run
 * that fails waits for the next period rather than being retried.
 */
export const JOB_KINDS: JobKinds = {
  [MAINTENANCE_PURGE]: { maxAttempts: 1 },
  [PURGE_DEVICE_LOGINS]: { maxAttempts: 1 },
  [PURGE_SIGN_IN_WINDOWS]: { maxAttempts: 1 },
  [PURGE_AUDIT_EVENTS]: { maxAttempts: 1 },
  // A failed delivery queues its own next attempt; these attempts cover a worker dying mid-send.
  [WEBHOOK_DELIVER]: { maxAttempts: 5 },
  [RENDER_RUN]: { maxAttempts: RENDER_MAX_ATTEMPTS },
  [RENDER_RESTORE]: { maxAttempts: RENDER_MAX_ATTEMPTS },
  [VERSION_PUBLISHED]: { maxAttempts: 5 },
  [REPOSITORY_MAINTENANCE]: { maxAttempts: 1 },
  // A branch locked by another writer (git's ref lock) is tried again; a merge's landing is owed until done.
  [CHANGE_REQUEST_LAND]: { maxAttempts: RENDER_MAX_ATTEMPTS },
  // Waiting for a canceled render's job is not an attempt (RetryLaterError); these cover the disk.
  [INSTALL_REPOSITORY_DELETE]: { maxAttempts: 10 },
  // The machine jobs give up their work after MACHINE_JOB_ATTEMPTS, then keep running until the
  // provider confirms what they leave behind (src/compute/jobs/common.ts, runMachineJob).
  [COMPUTE.createMachine]: { maxAttempts: MACHINE_JOB_MAX_RUNS },
  [COMPUTE.suspendMachine]: { maxAttempts: MACHINE_JOB_MAX_RUNS },
  [COMPUTE.resumeMachine]: { maxAttempts: MACHINE_JOB_MAX_RUNS },
  [COMPUTE.deleteMachine]: { maxAttempts: MACHINE_JOB_MAX_RUNS },
  // A deletion that gives up is queued again by the expiry scan each retry period.
  [COMPUTE.expireSuspension]: { maxAttempts: MACHINE_JOB_ATTEMPTS },
  [COMPUTE.expiryScan]: { maxAttempts: 1 },
};
