import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from './shared/logger.js';
import type { Config } from './config.js';
import type { DB } from './db/tables.js';
import type { Database, Engine } from './db/database.js';
import { settingsStore } from './db/settings.js';
import type { Clock } from './shared/clock.js';
import { CursorCodec } from './shared/cursor.js';
import { JobQueue } from './jobs/queue.js';
import { EventLog } from './events/record.js';
import type { CredentialLookups } from './auth/authenticator.js';
import { JOB_KINDS } from './job-kinds.js';
import { sessionForToken, type SessionPolicy } from './sessions/service.js';
import { apiTokenForHash } from './tokens/service.js';
import { identity } from './identity/service.js';
import { webhookFanOut } from './webhooks/fan-out.js';

/** What every area's service is built from: take the narrowest part of it you need. */
export interface ServiceDeps {
  db: Kysely<DB>;
  engine: Engine;
  clock: Clock;
  cursors: CursorCodec;
  config: Config;
  log: Logger;
  /** Background work: `jobs.enqueue(trx, job)`, in the write's transaction. */
  jobs: JobQueue;
  /** Events (docs/spec-gaps.md, "Events and the audit log"): `events.record(trx, ctx, type, resourceId)`, in the write's transaction. */
  events: EventLog;
  /**
   * The compute area's clock when it is not `clock`: given only by whoever starts the process
   * (`serve(config, { computeClock })`), never by configuration; tests of real processes move it.
   */
  computeClock?: Clock;
  /** The credential lookups the authenticator is given (for areas that authenticate on their own, the device page). */
  credentials: CredentialLookups;
}

/** The sessions, tokens and identity areas' answers to the authenticator's questions, on one database. */
export function credentialLookups(db: Kysely<DB>, sessions: SessionPolicy): CredentialLookups {
  return {
    session: (hash, now, lists) => sessionForToken(db, hash, now, sessions, lists),
    apiToken: (hash, now, lists) => apiTokenForHash(db, hash, now, lists),
    userForSubject: (subject) => identity.userForSubject(db, subject),
    roleOf: (workspaceId, userId) => identity.roleOf(db, workspaceId, userId),
  };
}

/**
 * What an event sets off in its own transaction, besides its row: the same in every kind of
 * process, since events are recorded by requests (`wsp serve`) and by jobs (`wsp serve` and
 * `wsp worker`: an endpoint disabled after a day of failures). Subscribed here, once per EventLog:
 * the HTTP wiring subscribes nothing, so a process without it misses nothing.
 */
function subscribeSideEffects(deps: ServiceDeps): void {
  deps.events.subscribe('webhooks.fan-out', webhookFanOut(deps));
}

/**
 * The composition root's first step, shared by `wsp serve` (src/app.ts) and `wsp worker`
 * (src/worker.ts): the dependencies every area is built from, on an open, migrated database,
 * with the side effects of events wired (subscribeSideEffects).
 */
export async function createDeps(opts: { config: Config; database: Database; clock: Clock; log: Logger; computeClock?: Clock | undefined }): Promise<ServiceDeps> {
  const { config, database, clock, log } = opts;
  const { db } = database;
  const cursorKey = Buffer.from(await settingsStore.getOrCreate(db, 'cursor_hmac_key', () => randomBytes(32).toString('base64')), 'base64');
  const deps: ServiceDeps = {
    db,
    engine: database.engine,
    clock,
    cursors: new CursorCodec(cursorKey),
    config,
    log,
    jobs: new JobQueue(clock, JOB_KINDS),
    events: new EventLog(clock),
    credentials: credentialLookups(db, config.sessions),
    ...(opts.computeClock ? { computeClock: opts.computeClock } : {}),
  };
  subscribeSideEffects(deps);
  return deps;
}
