import type { Config } from './config.js';
import { migrate, openDatabase } from './db/database.js';
import { warnAboutDataModes } from './data-modes.js';
import { systemClock, type Clock } from './shared/clock.js';
import { JobRunner, type JobDefinition, type JobPool, type RunnerOptions } from './jobs/runner.js';
import { maintenanceJobs } from './jobs/maintenance.js';
import { completeOperation } from './operations/service.js';
import { createSecretService } from './secrets/service.js';
import { installsJobs, renderJobPool } from './installs/job-definitions.js';
import { computeJobs } from './compute/job-definitions.js';
import { oauthJobs } from './oauth/job-definitions.js';
import { accountsJobs } from './accounts/job-definitions.js';
import { auditJobs } from './audit/job-definitions.js';
import { webhookDeliveryPool, webhookJobs } from './webhooks/delivery-job.js';
import { createDeps, type ServiceDeps } from './service-deps.js';
import { loggerOf, loggerOptions } from './log.js';
import { exitOnSignal } from './shutdown.js';

/**
 * Background work, composed apart from HTTP: `wsp serve` (src/app.ts) and `wsp worker` (`work`
 * below) both build their job runner here, and nothing here loads the web server.
 */

/** Every area's jobs, each area's `<area>Jobs(deps)`; their attempts are in src/job-kinds.ts. */
export function areaJobs(deps: ServiceDeps, runner: JobRunner): JobDefinition[] {
  return [...maintenanceJobs(deps.db, deps.clock, runner), ...oauthJobs(deps), ...accountsJobs(deps), ...auditJobs(deps), ...webhookJobs(deps), ...installsJobs(deps), ...computeJobs(deps)];
}

/**
 * The kinds of job with slots of their own, so that they cannot fill those of the others: webhook
 * deliveries wait on receivers outside the platform; renders, a workspace's share at a time, so
 * that a package update's renders neither wait in slots for their workspace's render threads nor
 * hold back the rest. Every other kind (restores, machine jobs, periodic work) shares the
 * runner's default slots.
 */
export function areaPools(deps: ServiceDeps): JobPool[] {
  return [webhookDeliveryPool(deps.config.webhookDeliveries), renderJobPool(deps.config.renders)];
}

/** A job runner on `deps` with every area's jobs registered (started by the caller). */
export function createRunner(deps: ServiceDeps, opts: RunnerOptions = {}): JobRunner {
  const { db, engine, clock, log, jobs } = deps;
  const runner = new JobRunner(
    { db, engine, clock, log, queue: jobs, operations: { complete: (trx, id, outcome) => completeOperation(trx, clock, id, outcome) } },
    { ...opts, pools: opts.pools ?? areaPools(deps) },
  );
  runner.define(areaJobs(deps, runner));
  return runner;
}

export interface WorkOptions {
  /** The worker's clock, when not the system's: only a test that starts the worker itself gives one (never configuration). */
  clock?: Clock;
}

/**
 * `wsp worker`: open and migrate the database, then run jobs until SIGTERM, which lets the jobs
 * under way finish. No HTTP: Fastify is neither built nor loaded.
 */
export async function work(config: Config, opts: WorkOptions = {}): Promise<void> {
  const log = loggerOf(loggerOptions(config.logLevel));
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, backgroundCheckpoints: true, ...config.database });
  let runner: JobRunner;
  try {
    await migrate(database);
    const deps = await createDeps({ config, database, clock: opts.clock ?? systemClock, log });
    // As the server does at start: a master key this database was not set up with stops it here.
    await createSecretService(deps).verifyMasterKey();
    runner = createRunner(deps, { leaseMs: config.jobLeaseSeconds * 1000 });
  } catch (err) {
    await database.close().catch(() => undefined);
    throw err;
  }

  exitOnSignal(
    log,
    config.shutdownGraceSeconds,
    'the jobs under way',
    async () => {
      await runner.stop();
      await database.close();
    },
    () => runner.release(),
  );

  runner.start();
  warnAboutDataModes(config, log);
  log.info({ engine: database.engine }, 'worker started');
}
