import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { KyselyPlugin } from 'kysely';
import { buildApp, loggerOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { migrate, openDatabase, type Database } from '../../src/db/database.js';
import { ManualClock } from '../../src/shared/clock.js';
import { createAdminService, type AdminService } from '../../src/admin/service.js';
import type { JwtVerifier } from '../../src/auth/jwt.js';
import type { App } from '../../src/http/fastify-types.js';
import { captureStream, harvest, harvestAuthorization, installLogScan, parseBody, registerSecret } from './log-scan.js';

// Every test file that uses the harness ends with a scan of every log line its apps and servers
// wrote: no credential, token or secret payload may be in one (test/helpers/log-scan.ts).
installLogScan();

/** Which engine this run of the suite uses: the runner runs it once per engine. */
export const ENGINE: 'sqlite' | 'postgres' = process.env.WSP_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  database: Database;
  /** What a second server process needs to reach the same database. */
  env: Record<string, string>;
  /** A temp directory for the app's local data (git repositories, key files), never ./data. */
  dataDir: string;
  cleanup(): Promise<void>;
}

/**
 * A fresh, migrated database: a temp SQLite file, or a schema of its own on the test PostgreSQL.
 * `migrateTo`: only up to that migration (a test of what a later one does to existing rows).
 */
export async function openTestDatabase(migrateTo?: string): Promise<TestDatabase> {
  if (ENGINE === 'postgres') {
    const url = process.env.WSP_TEST_PG_URL;
    if (!url) throw new Error('WSP_TEST_ENGINE=postgres needs WSP_TEST_PG_URL');
    // Prefixed with the run's id (scripts/test.mjs), which drops only its own run's schemas at the end.
    const schema = `t_${process.env.WSP_TEST_RUN_ID ?? ''}${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-test-'));
    const database = await openDatabase({ databaseUrl: url, dataDir, pgSchema: schema, poolSize: 20 });
    await migrate(database, migrateTo);
    const withSchema = new URL(url);
    withSchema.searchParams.set('options', `-c search_path=${schema}`);
    return {
      database,
      env: { DATABASE_URL: withSchema.toString(), WSP_DATA_DIR: dataDir },
      dataDir,
      async cleanup() {
        // The schema is left for scripts/test.mjs, which drops every schema of its run at the end
        // (one DROP SCHEMA per run rather than one per file).
        await database.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-test-'));
  const database = await openDatabase({ dataDir: dir });
  await migrate(database, migrateTo);
  return {
    database,
    env: { WSP_DATA_DIR: dir },
    dataDir: dir,
    async cleanup() {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Member {
  userId: string;
  session: string;
}

export interface Seed {
  workspaceId: string;
  owner: Member;
  admin: Member;
  member: Member;
  /** A workspace API token of this workspace. */
  apiToken: string;
  apiTokenId: string;
}

export interface TestApp {
  app: App;
  database: Database;
  clock: ManualClock;
  admin: AdminService;
  config: Config;
  dbEnv: Record<string, string>;
  /** A workspace with an owner, an admin, a member (each with a session) and an API token. */
  seed(name?: string): Promise<Seed>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: Partial<Config>;
  verifyJwt?: JwtVerifier;
  /**
   * Also write the app's JSON log lines here (the server's own logger settings, redaction
   * included). Lines are captured for the end-of-file log scan either way.
   */
  logStream?: NodeJS.WritableStream;
  /** The process's own figures in /metrics too, as `wsp serve` has them. */
  processMetrics?: boolean;
  /** Kysely plugins on the app's database handle (faults injected into some statements). */
  plugins?: KyselyPlugin[];
}

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const testDb = await openTestDatabase();
  const clock = new ManualClock(Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1000) * 1000);
  // Suites send many bad credentials on purpose: the failed-authentication limit is tested on its own.
  // A master key of its own per app, so no test reads or writes a key file unless it asks to
  // (config: {masterKey: undefined}).
  const masterKey = randomBytes(32).toString('base64');
  const config = { ...loadConfig({}), dataDir: testDb.dataDir, publicUrl: 'http://localhost:8080', authFailuresPerMinute: 1_000_000, masterKey, ...opts.config };
  // Always the server's own logger settings (level, redaction), into the log scan's capture;
  // WSP_TEST_LOG also prints the lines.
  const logger = loggerOptions(config.logLevel, captureStream(`app ${++appCount}`, opts.logStream));
  registerSecret(config.masterKey, ...(config.masterKeyPrevious ?? []));
  const app = await buildApp({
    config,
    database: opts.plugins ? { ...testDb.database, db: opts.plugins.reduce((db, p) => db.withPlugin(p), testDb.database.db) } : testDb.database,
    clock,
    logger,
    ...(opts.verifyJwt ? { verifyJwt: opts.verifyJwt } : {}),
    ...(opts.processMetrics ? { processMetrics: true } : {}),
  });
  watchInject(app);
  const admin = watchAdmin(createAdminService(testDb.database.db, clock, config.sessions));
  async function member(workspaceId: string, role: 'owner' | 'admin' | 'member'): Promise<Member> {
    const { user_id } = await admin.createUser({ name: role });
    await admin.addMember(workspaceId, user_id, role);
    const { session_token } = await admin.createSession(user_id);
    return { userId: user_id, session: session_token };
  }
  return {
    app,
    database: testDb.database,
    clock,
    admin,
    config,
    dbEnv: testDb.env,
    async seed(name = 'Acme') {
      const { workspace_id } = await admin.createWorkspace(name);
      const owner = await member(workspace_id, 'owner');
      const adm = await member(workspace_id, 'admin');
      const mem = await member(workspace_id, 'member');
      const tok = await admin.createApiToken(workspace_id, owner.userId, 'seed');
      return { workspaceId: workspace_id, owner, admin: adm, member: mem, apiToken: tok.token, apiTokenId: tok.id };
    },
    async close() {
      await app.close();
      await testDb.cleanup();
    },
  };
}

let appCount = 0;

/**
 * Registers for the log scan what passes through `app.inject`: credential-shaped Authorization
 * values, credentials in bodies and answers, and secret payloads that were accepted or returned.
 */
function watchInject(app: App): void {
  const inject = app.inject.bind(app) as (...args: unknown[]) => unknown;
  (app as unknown as { inject: (...args: unknown[]) => unknown }).inject = (...args: unknown[]) => {
    const [opts, callback] = args;
    if (opts === undefined || typeof opts !== 'object' || typeof callback === 'function') return inject(...args);
    const o = opts as { headers?: Record<string, unknown>; payload?: unknown; body?: unknown };
    const headers = o.headers ?? {};
    const type = headers['content-type'] ?? headers['Content-Type'];
    harvestAuthorization(headers.authorization ?? headers.Authorization);
    const sent = parseBody(o.payload ?? o.body, type);
    return (inject(opts) as Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>).then((res) => {
      if (res.statusCode >= 200 && res.statusCode < 300) {
        harvest(sent, true);
        if (String(res.headers['content-type'] ?? '').includes('json')) harvest(parseBody(res.body, 'application/json'), true);
      }
      return res;
    });
  };
}

/** The admin service, with every credential it hands out registered for the log scan. */
function watchAdmin(admin: AdminService): AdminService {
  const svc = admin as unknown as Record<string, unknown>;
  for (const [name, fn] of Object.entries(svc)) {
    if (typeof fn !== 'function' || fn.constructor.name !== 'AsyncFunction') continue;
    svc[name] = async (...args: unknown[]) => {
      const out = await (fn as (...a: unknown[]) => Promise<unknown>).apply(admin, args);
      harvest(out, false);
      return out;
    };
  }
  return admin;
}

let people = 0;
/**
 * A user who signs in with an email (unique per call) and `password`; a member of `member.workspaceId`
 * with `member.role` when given.
 */
export async function userWithPassword(app: TestApp, password: string, member?: { workspaceId: string; role: 'owner' | 'admin' | 'member' }): Promise<{ userId: string; email: string }> {
  const email = `person-${++people}-${randomBytes(3).toString('hex')}@example.com`;
  const { user_id } = await app.admin.createUser({ name: `Person ${people}`, email });
  await app.admin.setPassword(user_id, password);
  if (member) await app.admin.addMember(member.workspaceId, user_id, member.role);
  return { userId: user_id, email };
}

/** Headers of a call made with a credential, and a Service-Context when given. */
export function as(credential: string, workspaceId?: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${credential}`, ...(workspaceId ? { 'service-context': workspaceId } : {}), ...extra };
}

/** The first error entry of an envelope response. */
export function firstError(body: unknown): { code: number; message: string; path?: string[]; metadata?: Record<string, string> } {
  const b = body as { success?: boolean; errors?: { code: number; message: string; path?: string[] }[]; result?: unknown };
  if (b.success !== false || !Array.isArray(b.errors) || !b.errors[0]) throw new Error(`not an error envelope: ${JSON.stringify(body)}`);
  return b.errors[0];
}
