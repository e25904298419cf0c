import { buildApp, loggerOptions } from './app.js';
import type { Config } from './config.js';
import type { Clock } from './shared/clock.js';
import { migrate, openDatabase } from './db/database.js';

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
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrate(database);
  const app = await buildApp({ config, database, logger: loggerOptions(config.logLevel), processMetrics: true, jobs: { leaseMs: config.jobLeaseSeconds * 1000 }, ...(opts.computeClock ? { computeClock: opts.computeClock } : {}) });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'shutting down: finishing in-flight requests and jobs');
    // A client that never finishes its request must not keep the process alive forever.
    const deadline = setTimeout(() => {
      app.log.error({ graceSeconds: config.shutdownGraceSeconds }, 'shutdown grace period over: exiting with work in flight');
      process.exit(1);
    }, config.shutdownGraceSeconds * 1000);
    deadline.unref();
    try {
      // New connections are refused while in-flight requests finish; the job runner stops in onClose.
      await app.close();
      await database.close();
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

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
  app.log.info({ address, engine: database.engine, worker: opts.worker }, 'listening');
  // After listening, so that readiness does not wait for it; a request needing a schema first compiles it itself.
  app.schemaCompilation.warm().catch((err: unknown) => app.log.error({ err }, 'a route schema does not compile'));
}
