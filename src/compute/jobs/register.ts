import { JOB } from './kinds.js';
import { MACHINE_JOB_ATTEMPTS, MACHINE_JOB_MAX_RUNS, type ComputeJobDeps } from './common.js';
import { createMachineJob } from './create-machine.js';
import { suspendMachineJob } from './suspend-machine.js';
import { resumeMachineJob } from './resume-machine.js';
import { expiryScanJob } from '../scheduler/expiry-scan.js';
import { expireSuspensionJob } from '../scheduler/expire-suspension.js';

/** The compute area's background work on a job runner (the app's, or another instance's in tests). */
export function registerComputeJobs(deps: ComputeJobDeps): void {
  const { jobs } = deps;
  // The machine jobs give up their work after MACHINE_JOB_ATTEMPTS, then keep running until
  // the provider confirms what they leave behind (runMachineJob).
  jobs.register(JOB.createMachine, createMachineJob(deps), { maxAttempts: MACHINE_JOB_MAX_RUNS });
  jobs.register(JOB.suspendMachine, suspendMachineJob(deps), { maxAttempts: MACHINE_JOB_MAX_RUNS });
  jobs.register(JOB.resumeMachine, resumeMachineJob(deps), { maxAttempts: MACHINE_JOB_MAX_RUNS });
  // A deletion that gives up is queued again by the expiry scan each retry period.
  jobs.register(JOB.expireSuspension, expireSuspensionJob(deps), { maxAttempts: MACHINE_JOB_ATTEMPTS });
  jobs.register(JOB.expiryScan, expiryScanJob(deps), { maxAttempts: 1 });
  jobs.every(JOB.expiryScan, deps.config.schedulerIntervalSeconds);
}
