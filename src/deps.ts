import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { DB } from './db/tables.js';
import type { Engine } from './db/database.js';
import type { Clock } from './shared/clock.js';
import type { CursorCodec } from './http/cursor.js';
import type { JobRunner } from './jobs/runner.js';

/** What every area's service is built from: take the narrowest part of it you need. */
export interface ServiceDeps {
  db: Kysely<DB>;
  engine: Engine;
  clock: Clock;
  cursors: CursorCodec;
  config: Config;
  log: FastifyBaseLogger;
  /** Background work: register handlers, enqueue jobs (in the write's transaction). */
  jobs: JobRunner;
}
