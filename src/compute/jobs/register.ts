import type { JobDefinition } from '../../jobs/runner.js';
import { JOB } from './kinds.js';
import type { ComputeJobDeps } from './common.js';
import { createMachineJob } from './create-machine.js';
import { suspendMachineJob } from './suspend-machine.js';
import { resumeMachineJob } from './resume-machine.js';
import { deleteMachineJob } from './delete-machine.js';
import { expiryScanJob } from '../scheduler/expiry-scan.js';
import { expireSuspensionJob } from '../scheduler/expire-suspension.js';

/** The compute area's jobs on given dependencies (a second instance's worker in tests); attempts: src/job-kinds.ts. */
export function computeJobDefinitions(deps: ComputeJobDeps): JobDefinition[] {
  return [
    { kind: JOB.createMachine, run: createMachineJob(deps) },
    { kind: JOB.suspendMachine, run: suspendMachineJob(deps) },
    { kind: JOB.resumeMachine, run: resumeMachineJob(deps) },
    { kind: JOB.deleteMachine, run: deleteMachineJob(deps) },
    { kind: JOB.expireSuspension, run: expireSuspensionJob(deps) },
    { kind: JOB.expiryScan, run: expiryScanJob(deps), everySeconds: deps.config.schedulerIntervalSeconds },
  ];
}
