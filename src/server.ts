import { buildApp, loggerOptions } from './app.js';
import type { Config } from './config.js';
import { migrate, openDatabase } from './db/database.js';

export interface ServeOptions {
  /** Serve HTTP (false: `wsp worker`). */
  http: boolean;
  /** Run the job worker in this process (false: `wsp serve --no-worker`). */
  worker: boolean;
}

/**
 * `wsp serve` and `wsp worker`: open and migrate the database, then serve and/or work, and
 * on SIGTERM finish what is in flight (requests and jobs) before exiting.
 */
export async function serve(config: Config, opts: ServeOptions = { http: true, worker: true }): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrate(database);
  const app = await buildApp({ config, database, logger: loggerOptions(config.logLevel), processMetrics: opts.http });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    // New requests get 503 while in-flight ones finish; the job runner stops in onClose.
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  if (opts.worker) app.jobs.start();
  if (opts.http) {
    const address = await app.listen({ port: config.port, host: config.host });
    app.log.info({ address, engine: database.engine, worker: opts.worker }, 'listening');
  } else {
    app.log.info({ engine: database.engine }, 'worker started');
  }
}
