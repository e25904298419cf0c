import type { ServiceDeps } from '../../service-deps.js';
import type { MachinesTable } from '../tables.js';
import type { Job } from '../../jobs/runner.js';
import { PermanentJobError, publicFailure, type JobFailure } from '../../jobs/failure.js';
import { ErrorCodes } from '../../shared/errors.js';
import { baseOf } from '../../shared/ids.js';
import { providerForConfig, type ProviderAccounts, type SecretLookup } from '../provider/accounts.js';
import { toJobError } from '../provider/errors.js';
import { ProviderError, type ComputeProvider, type Labels, type ProviderAction } from '../provider/types.js';
import { computeConfigStore } from '../configs/store.js';
import { MACHINE_JOB_ATTEMPTS } from './kinds.js';
import { machineStore } from '../machines/store.js';

export interface ComputeJobDeps extends Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'log' | 'jobs' | 'config'> {
  accounts: ProviderAccounts;
  secrets: SecretLookup;
}

/** Polls of a provider action in one run before the job is retried later. */
const POLLS_PER_RUN = 10;

/** What the platform labels its servers and snapshots with at the provider. */
export const machineLabels = (machineId: string): Labels => ({ 'wsp-machine': baseOf(machineId) });
export const operationLabels = (operationId: string): Labels => ({ 'wsp-operation': baseOf(operationId) });

/** Not a failure: the provider is still working on `what`; the job runs again after its backoff. */
export class StillRunning extends Error {
  constructor(
    message: string,
    /** What the provider has not finished, for the operation's error if the job gives up waiting: `the snapshot`. */
    readonly what: string,
  ) {
    super(message);
  }
}

/** The provider account of a machine's config. */
export async function providerForMachine(deps: ComputeJobDeps, machine: MachinesTable): Promise<ComputeProvider> {
  return (await accountOf(deps, machine)).provider;
}

async function accountOf(deps: ComputeJobDeps, machine: MachinesTable): Promise<{ provider: ComputeProvider; own: boolean }> {
  const config = await computeConfigStore.get(deps.db, machine.workspace_id, machine.compute_config_id);
  if (!config) throw new PermanentJobError('The compute config of this machine no longer exists', ErrorCodes.PROVIDER_ACCOUNT_UNUSABLE.code);
  const provider = await providerForConfig(deps.accounts, deps.secrets, config);
  if (!provider) throw new PermanentJobError(ErrorCodes.PROVIDER_ACCOUNT_UNUSABLE.message, ErrorCodes.PROVIDER_ACCOUNT_UNUSABLE.code);
  return { provider, own: config.secret_id !== null };
}

/** Polls an action a few times: resolves on success, fails for good on error, retries later while it runs. */
export async function awaitAction(deps: ComputeJobDeps, provider: ComputeProvider, action: ProviderAction, what: string, noun: string): Promise<void> {
  let current = action;
  for (let poll = 0; ; poll++) {
    if (current.status === 'success') return;
    if (current.status === 'error') {
      const reason = current.error ? `${current.error.message} (provider code ${current.error.code})` : 'no reason given';
      throw new PermanentJobError(`The provider could not ${what}: ${reason}`, ErrorCodes.PROVIDER_ACTION_FAILED.code);
    }
    if (poll >= POLLS_PER_RUN) throw new StillRunning(`The provider is still busy to ${what}`, noun);
    await new Promise((r) => setTimeout(r, deps.config.provider.actionPollMs));
    current = await provider.getAction(action.id);
  }
}

/**
 * Deletes every server with these labels and waits until the provider confirms each is
 * gone; throws (the job comes back later) while any is still there.
 */
export async function removeServers(deps: ComputeJobDeps, provider: ComputeProvider, labels: Labels): Promise<void> {
  for (const server of await provider.findServers(labels)) {
    const deletion = await provider.deleteServer(server.id);
    if (deletion) await awaitAction(deps, provider, deletion, 'delete the server', 'the deletion of the server');
  }
  const left = await provider.findServers(labels);
  if (left.length > 0) throw new StillRunning(`The provider still lists server ${left.map((s) => s.id).join(', ')}`, 'the deletion of the server');
}

/** How a job that gave up ended once the provider confirmed the state: a result after all, or the failure. */
export type Settled<T> = { ok: T } | { failed: JobFailure };

/**
 * `null` when the account cannot be used to look (the config's secret has no enabled version,
 * or the provider refuses the workspace's own token): the settle then records what is most
 * likely, since whatever is left lives in the workspace's own provider project.
 */
export type SettleProvider = ComputeProvider | null;

function failureOf(err: unknown, attempt: number): JobFailure {
  if (err instanceof PermanentJobError) return { code: err.code, message: err.message };
  if (err instanceof StillRunning) {
    return { code: ErrorCodes.PROVIDER_ACTION_TIMEOUT.code, message: `Gave up after ${attempt} attempts: the provider did not finish ${err.what} in time` };
  }
  if (err instanceof ProviderError) {
    return { code: ErrorCodes.PROVIDER_UNAVAILABLE.code, message: `Gave up after ${attempt} attempts: the compute provider was unreachable, timing out or rate limiting` };
  }
  // Not the provider's: the job-error policy's fixed words (the error itself is in the job's log line).
  return publicFailure(err);
}

/**
 * Runs a machine job. `work` runs until it succeeds or fails for good (the provider refused,
 * an action ended in error, or every attempt is spent). Then the job records the failure on
 * the machine (`cleanup`) and from then on runs only `settle`, on this and every later run,
 * until the provider confirms a state that the database can record truthfully: no server or
 * snapshot is ever left unrecorded, and none that holds the only copy of a disk is deleted.
 * `settle` throws while it cannot tell (the provider down, a deletion still running): the
 * job comes back after its backoff, however long that takes. The machine stays in its
 * transitional status (creating, suspending, resuming) meanwhile, and its operation pending.
 */
export async function runMachineJob<T>(
  deps: ComputeJobDeps,
  job: Job,
  machine: MachinesTable,
  work: () => Promise<T>,
  settle: (failure: JobFailure, provider: SettleProvider) => Promise<Settled<T>>,
): Promise<T> {
  let failure: JobFailure | null = machine.cleanup ? (JSON.parse(machine.cleanup) as JobFailure) : null;
  if (!failure) {
    try {
      return await work();
    } catch (raw) {
      const err = toJobError(raw);
      if (!(err instanceof PermanentJobError) && job.attempt < MACHINE_JOB_ATTEMPTS) throw err;
      failure = failureOf(err, job.attempt);
      // The operation will show `failure`'s words only: the error itself is logged here, with the job.
      deps.log.warn({ job: job.id, kind: job.kind, machine: machine.id, attempt: job.attempt, err: raw }, 'compute job gave up its work; putting things right at the provider');
      await machineStore.update(deps.db, machine.id, { cleanup: JSON.stringify(failure) });
    }
  }

  let settled: Settled<T>;
  let account: { provider: ComputeProvider; own: boolean } | null;
  try {
    account = await accountOf(deps, machine);
  } catch (err) {
    if (!(err instanceof PermanentJobError)) throw err;
    account = null;
  }
  try {
    settled = await settle(failure, account?.provider ?? null);
  } catch (err) {
    // The workspace's own token refused: nothing more can be seen or removed with it.
    if (!(account?.own && err instanceof ProviderError && err.failure === 'rejected')) {
      deps.log.warn({ job: job.id, kind: job.kind, machine: machine.id, err: err instanceof Error ? err.message : String(err) }, 'compute job is still putting things right at the provider');
      // Never the job's end: only the provider's confirmation ends it.
      throw err instanceof PermanentJobError ? new Error(err.message) : err;
    }
    settled = await settle(failure, null);
  }
  if ('failed' in settled) throw new PermanentJobError(settled.failed.message, settled.failed.code);
  return settled.ok;
}
