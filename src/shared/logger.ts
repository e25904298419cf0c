import type { LogFn } from 'pino';

/** What the platform logs through: Fastify's app and request loggers and a worker's pino logger alike. */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}
