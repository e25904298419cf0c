import { buildApp, loggerOptions } from './app.js';
import type { Config } from './config.js';
import type { Clock } from './shared/clock.js';
import { migrate, openDatabase } from './db/database.js';
import { exitOnSignal } from './shutdown.js';
import { warnAboutDataModes } from './data-modes.js';
import { issueSetupCode } from './accounts/setup-code.js';
import { compileCache } from './shared/compile-cache.js';

export interface ServeOptions {
  /** Run the job worker in this process (false: `wsp serve --no-worker`). */
  worker: boolean;
  /** The compute area's clock, when not the system's: only a test that starts the server itself gives one. */
  computeClock?: Clock;
}

/**
 * `wsp serve`: open and migrate the database, then serve (and work, unless --no-worker), and
 * on SIGTERM finish what is in flight (requests and jobs) before exiting. `wsp worker` is
 * src/worker.ts, which builds no web server.
 */
export async function serve(config: Config, opts: ServeOptions = { worker: true }): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, backgroundCheckpoints: true, ...config.database });
  await migrate(database);
  const app = await buildApp({
    config,
    database,
    logger: loggerOptions(config.logLevel),
    processMetrics: true,
    jobs: { leaseMs: config.jobLeaseSeconds * 1000 },
    ...(opts.computeClock ? { computeClock: opts.computeClock } : {}),
  });

  exitOnSignal(
    app.log,
    config.shutdownGraceSeconds,
    'in-flight requests and jobs',
    async () => {
      // New connections are refused while in-flight requests finish; the job runner stops in onClose.
      await app.close();
      await database.close();
    },
    () => app.jobs.release(),
  );

  let address: string;
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // A port in use must end the process with its error, not leave it running without HTTP.
    await app.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw err;
  }
  if (opts.worker) app.jobs.start();
  warnAboutDataModes(config, app.log);
  const setupCode = await issueSetupCode(database.db);
  if (setupCode) app.log.warn({ setup_code: setupCode }, `First run: no user yet. Open ${config.publicUrl}/console/ or POST /v1/setup with this setup code to make the first owner`);
  const cached = compileCache();
  app.log.info(
    { address, engine: database.engine, worker: opts.worker, ...(database.checkpoints ? { sqlite_checkpoints: database.checkpoints } : {}), ...(cached ? { compile_cache: cached.cache } : {}) },
    'listening',
  );
  // After listening, so that readiness does not wait for it; a request needing a schema first compiles it itself.
  const warming = performance.now();
  app.schemaCompilation.warm().then(
    () => {
      app.log.info({ ms: Math.round(performance.now() - warming) }, 'route schemas compiled');
      // Warm, the process has compiled what a start and a request need: what the next start takes from the cache.
      if (cached?.save()) app.log.info('compile cache written');
    },
    (err: unknown) => app.log.error({ err }, 'a route schema does not compile'),
  );
}
