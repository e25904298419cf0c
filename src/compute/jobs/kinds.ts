/** Job kinds of the compute area, and the operation kinds clients see. */
export const JOB = {
  createMachine: 'compute.machine_create',
  suspendMachine: 'compute.machine_suspend',
  resumeMachine: 'compute.machine_resume',
  expireSuspension: 'compute.suspension_expire',
  expiryScan: 'compute.expiry_scan',
} as const;

export const OPERATION = {
  createMachine: 'machine.create',
  suspendMachine: 'machine.suspend',
  resumeMachine: 'machine.resume',
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
