import { buildApp, loggerOptions } from './app.js';
import type { Config } from './config.js';
import { migrate, openDatabase } from './db/database.js';

/** `wsp serve`: opens and migrates the database, listens, and shuts down gracefully. */
export async function serve(config: Config): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrate(database);
  const app = await buildApp({ config, database, logger: loggerOptions(config.logLevel), processMetrics: true });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    // In-flight requests finish; new ones get 503 while the server closes.
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
  app.log.info({ address, engine: database.engine }, 'listening');
}
