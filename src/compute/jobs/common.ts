import type { ServiceDeps } from '../../deps.js';
import type { MachinesTable } from '../../db/tables.js';
import type { Job } from '../../jobs/runner.js';
import { PermanentJobError } from '../../jobs/runner.js';
import { ErrorCodes } from '../../shared/errors.js';
import { baseOf } from '../../shared/ids.js';
import { providerForConfig, type ProviderAccounts, type SecretLookup } from '../provider/accounts.js';
import { toJobError } from '../provider/errors.js';
import type { ComputeProvider, Labels, ProviderAction } from '../provider/types.js';
import { computeConfigStore } from '../configs/store.js';

export interface ComputeJobDeps extends Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'log' | 'jobs' | 'config'> {
  accounts: ProviderAccounts;
  secrets: SecretLookup;
}

/**
 * Attempts of a machine job. The backoff doubles from 1 s to its 5-minute cap, so these
 * cover about 90 minutes of provider trouble, a slow snapshot, or an exhausted hourly
 * rate-limit budget (a wait the client honours without sending anything), before the job
 * gives up and undoes what it started.
 */
export const MACHINE_JOB_ATTEMPTS = 25;
/** Polls of a provider action in one run before the job is retried later. */
const POLLS_PER_RUN = 10;

/** What the platform labels its servers and snapshots with at the provider. */
export const machineLabels = (machineId: string): Labels => ({ 'wsp-machine': baseOf(machineId) });
export const operationLabels = (operationId: string): Labels => ({ 'wsp-operation': baseOf(operationId) });

/** Not a failure: the provider is still working; the job runs again after its backoff. */
export class StillRunning extends Error {}

/** The provider account of a machine's config. */
export async function providerForMachine(deps: ComputeJobDeps, machine: MachinesTable): Promise<ComputeProvider> {
  const config = await computeConfigStore.get(deps.db, machine.workspace_id, machine.compute_config_id);
  if (!config) throw new PermanentJobError('The compute config of this machine no longer exists', ErrorCodes.PROVIDER_ACCOUNT_UNUSABLE.code);
  const provider = await providerForConfig(deps.accounts, deps.secrets, config);
  if (!provider) throw new PermanentJobError(ErrorCodes.PROVIDER_ACCOUNT_UNUSABLE.message, ErrorCodes.PROVIDER_ACCOUNT_UNUSABLE.code);
  return provider;
}

/** Polls an action a few times: resolves on success, fails for good on error, retries later while it runs. */
export async function awaitAction(deps: ComputeJobDeps, provider: ComputeProvider, action: ProviderAction, what: string): Promise<void> {
  let current = action;
  for (let poll = 0; ; poll++) {
    if (current.status === 'success') return;
    if (current.status === 'error') {
      const reason = current.error ? `${current.error.message} (provider code ${current.error.code})` : 'no reason given';
      throw new PermanentJobError(`The provider could not ${what}: ${reason}`, ErrorCodes.PROVIDER_ACTION_FAILED.code);
    }
    if (poll >= POLLS_PER_RUN) throw new StillRunning(`The provider is still busy to ${what}`);
    await new Promise((r) => setTimeout(r, deps.config.provider.actionPollMs));
    current = await provider.getAction(action.id);
  }
}

/**
 * Runs a job's work. When it fails for good (the provider refused, or every attempt is
 * spent) `undo` puts things back as they were before the job, so a failure never leaves a
 * half-done change behind; the operation records why.
 */
export async function runUndoable<T>(deps: ComputeJobDeps, job: Job, work: () => Promise<T>, undo: () => Promise<void>): Promise<T> {
  try {
    return await work();
  } catch (raw) {
    const err = toJobError(raw);
    const final = err instanceof PermanentJobError || job.attempt >= MACHINE_JOB_ATTEMPTS;
    if (!final) throw err;
    try {
      await undo();
    } catch (undoErr) {
      deps.log.error({ err: undoErr, job: job.id, kind: job.kind }, 'compute job could not undo its partial work');
    }
    if (err instanceof PermanentJobError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new PermanentJobError(`Gave up after ${job.attempt} attempts: ${message}`, ErrorCodes.PROVIDER_UNAVAILABLE.code);
  }
}
