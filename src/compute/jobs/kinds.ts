/** Job kinds of the compute area, and the operation kinds clients see. */
export const JOB = {
  createMachine: 'compute.machine_create',
  suspendMachine: 'compute.machine_suspend',
  resumeMachine: 'compute.machine_resume',
  deleteMachine: 'compute.machine_delete',
  expireSuspension: 'compute.suspension_expire',
  expiryScan: 'compute.expiry_scan',
} as const;

/**
 * Attempts a machine job's work gets. The backoff doubles from 1 s to its 5-minute cap, so
 * these cover about 90 minutes of provider trouble, a slow snapshot, or an exhausted hourly
 * rate-limit budget (a wait the client honours without sending anything), before the job
 * gives up and puts back what it started.
 */
export const MACHINE_JOB_ATTEMPTS = 25;
/**
 * The runs a machine job may take in all (its `maxAttempts`): far beyond the work's own
 * attempts, because once it gave up the job keeps running, every 5 minutes at most, until
 * the provider confirms that what it started is put right (about a year of outage).
 */
export const MACHINE_JOB_MAX_RUNS = 100_000;

export const OPERATION = {
  createMachine: 'machine.create',
  suspendMachine: 'machine.suspend',
  resumeMachine: 'machine.resume',
  deleteMachine: 'machine.delete',
} as const;

export interface MachineJob {
  machineId: string;
}
export interface SuspendJob extends MachineJob {
  reason: 'manual' | 'downgrade';
}
export interface SuspensionJob {
  suspensionId: string;
}
