import { loadConfig, type Config } from '../config.js';
import { migrate, openDatabase, type Database } from '../db/database.js';
import { rotateMasterKey } from '../secrets/rotation.js';
import { MasterKeyError } from '../secrets/master-key.js';
import { importDashboardFile } from '../dashboards/import.js';
import { suspendMachineAsOperator } from '../compute/machines/operator.js';
import { systemClock } from '../shared/clock.js';
import { AdminError, createAdminService, type AdminService } from '../admin/service.js';
import { JobQueue } from '../jobs/queue.js';
import { JOB_KINDS } from '../job-kinds.js';
import { backupSqlite, restoreSqlite } from '../admin/backup.js';
import { parseArgs, stringFlag, UsageError, type Parsed } from './args.js';

export const ADMIN_HELP = `wsp admin: operator commands, run against the configured database (WSP_DATA_DIR or DATABASE_URL),
which they create and migrate if needed. --json prints one JSON object.

  wsp admin bootstrap [--email E [--password-stdin]] [--force] [--json]
                                                    a workspace, an owner, a session token and an API token;
                                                    refused once the database has a user, unless --force;
                                                    --email and a password on stdin let the owner sign in
  wsp admin workspace create --name N [--json]      -> {workspace_id}
  wsp admin user create [--name N] [--email E] [--json]  -> {user_id}
  wsp admin user link --user USR --subject SUB      link an external JWT subject to a user
  wsp admin user set-password --user USR            the password (12-256 characters) read from stdin
  wsp admin user verify-email --user USR            vouch for the user's address (single sign-on may then find them by it)
  wsp admin user release-email --user USR           free an address its account never proved (so its owner can accept an invitation)
  wsp admin member add --workspace WS --user USR --role owner|admin|member|viewer
  wsp admin member remove --workspace WS --user USR  end a membership (not the last owner's)
  wsp admin session create --user USR [--json]      -> {session_token}
  wsp admin session revoke --session SES | --user USR --all
                                                    end one session, or every session of a user
  wsp admin migrate                                 apply pending migrations
  wsp admin dashboard import FILE [--json]          bring in a dashboard with its history (JSON: {workspace_id,
                                                    revisions: [...] oldest first}), each revision source backfill
                                                    -> {dashboard_id, current_revision_id, revisions}
  wsp admin rotate-master-key [--json]              re-wrap every secret's data key under the current master key
                                                    (a new key file, or WSP_MASTER_KEY with the old one in
                                                    WSP_MASTER_KEY_PREVIOUS); servers keep running
  wsp admin machine suspend --machine MCH --reason downgrade|manual [--json]
                                                    the platform suspends a running machine (a plan downgrade):
                                                    queues the job POST /v1/machines/{id}:suspend queues, which a
                                                    server's worker runs; the suspension lists the reason
                                                    -> {machine_id, workspace_id, status, operation_id, reason}
  wsp admin backup --to FILE [--json]               SQLite: the database and every install's repository, consistent
                                                    with each other, in one tar file, while servers keep running;
                                                    not the master key. PostgreSQL: refused, see the README
                                                    -> {backup, bytes, installs, migration}
  wsp admin restore --from FILE --data-dir DIR [--json]
                                                    a backup unpacked into DIR, which must be new or empty; start
                                                    wsp with WSP_DATA_DIR=DIR and the same master key
                                                    -> {data_dir, installs, migration, created_at, wsp_version}
`;

type Run = (svc: AdminService, p: Parsed, env: { database: Database; config: Config; input: NodeJS.ReadableStream }) => Promise<Record<string, unknown>>;

/** A password piped to the command: all of stdin, without the one line break `echo` adds. */
async function readPassword(input: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += String(chunk);
    if (text.length > 4096) throw new AdminError('the password on stdin is longer than 256 characters');
  }
  return text.replace(/\r?\n$/, '');
}

/** An operator command: the string flags it takes (each also takes --json and --help) and what it does. */
interface Command {
  flags: readonly string[];
  booleans?: readonly string[];
  run?: Run;
  /** A command that must not open (and so create) the configured database: it writes elsewhere. */
  withoutDatabase?: (p: Parsed) => Promise<Record<string, unknown>>;
}

const COMMANDS: Record<string, Command> = {
  bootstrap: {
    flags: ['email'],
    booleans: ['force', 'password-stdin'],
    run: async (svc, p, { input }) => {
      const email = stringFlag(p, 'email');
      if (p.flags['password-stdin'] && email === undefined) throw new UsageError('--password-stdin needs --email: a password is for signing in with an email');
      const password = p.flags['password-stdin'] ? await readPassword(input) : undefined;
      return svc.bootstrap({ force: p.flags.force === true, email, password });
    },
  },
  'workspace create': { flags: ['name'], run: (svc, p) => svc.createWorkspace(stringFlag(p, 'name', true)) },
  'user create': { flags: ['name', 'email'], run: (svc, p) => svc.createUser({ name: stringFlag(p, 'name'), email: stringFlag(p, 'email') }) },
  'user set-password': { flags: ['user'], run: async (svc, p, { input }) => svc.setPassword(stringFlag(p, 'user', true), await readPassword(input)) },
  'user link': { flags: ['user', 'subject'], run: (svc, p) => svc.linkSubject(stringFlag(p, 'user', true), stringFlag(p, 'subject', true)) },
  'user verify-email': { flags: ['user'], run: (svc, p) => svc.verifyEmail(stringFlag(p, 'user', true)) },
  'user release-email': { flags: ['user'], run: (svc, p) => svc.releaseEmail(stringFlag(p, 'user', true)) },
  'member add': {
    flags: ['workspace', 'user', 'role'],
    run: (svc, p) => svc.addMember(stringFlag(p, 'workspace', true), stringFlag(p, 'user', true), stringFlag(p, 'role', true)),
  },
  'member remove': { flags: ['workspace', 'user'], run: (svc, p) => svc.removeMember(stringFlag(p, 'workspace', true), stringFlag(p, 'user', true)) },
  'session create': { flags: ['user'], run: (svc, p) => svc.createSession(stringFlag(p, 'user', true)) },
  'session revoke': {
    flags: ['session', 'user'],
    booleans: ['all'],
    run: (svc, p) => {
      const session = stringFlag(p, 'session');
      const user = stringFlag(p, 'user');
      if (session !== undefined && user === undefined && !p.flags.all) return svc.revokeSession(session);
      if (user !== undefined && session === undefined && p.flags.all) return svc.revokeSessionsOf(user);
      throw new UsageError('session revoke takes --session SES, or --user USR --all');
    },
  },
  migrate: { flags: [], run: async () => ({ migrated: true }) },
  'dashboard import': {
    flags: [],
    run: (_svc, p, { database }) => {
      const file = p.positionals[2];
      if (file === undefined) throw new UsageError('dashboard import needs the FILE to read');
      return importDashboardFile(database.db, file);
    },
  },
  'rotate-master-key': { flags: [], run: async (_svc, _p, { database, config }) => ({ ...(await rotateMasterKey(database.db, config)) }) },
  backup: { flags: ['to'], run: (_svc, p, { database, config }) => backupSqlite(database, config, stringFlag(p, 'to', true)) },
  restore: { flags: ['from', 'data-dir'], withoutDatabase: (p) => restoreSqlite(stringFlag(p, 'from', true), stringFlag(p, 'data-dir', true)) },
  // No worker here: the job waits in the queue for a server's or `wsp worker`'s (src/job-kinds.ts gives its attempts).
  'machine suspend': {
    flags: ['machine', 'reason'],
    run: (_svc, p, { database }) =>
      suspendMachineAsOperator(
        { db: database.db, engine: database.engine, clock: systemClock, jobs: new JobQueue(systemClock, JOB_KINDS) },
        stringFlag(p, 'machine', true),
        stringFlag(p, 'reason', true),
      ),
  },
};

/** Why the database cannot be used, naming it without its password: a line for an operator, not a stack. */
function cannotOpen(config: Config, e: unknown): string {
  let where = `the SQLite database in ${config.dataDir}`;
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    if (url.password) url.password = '***';
    where = `the database at ${url.toString()}`;
  }
  return `cannot open or migrate ${where}: ${reasonOf(e)}`;
}

function reasonOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  // Node reports a connection refused on every address of a host name as an AggregateError with no message.
  const inner = e instanceof AggregateError ? e.errors.map(reasonOf).filter(Boolean) : [];
  const code = (e as NodeJS.ErrnoException).code;
  return e.message || inner.join('; ') || code || e.name;
}

function humanize(result: Record<string, unknown>): string {
  return Object.entries(result)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join('\n');
}

/** Runs one admin command; returns the process exit code. */
export async function runAdmin(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  // The command's name comes first: it says which flags the rest may hold.
  const firstFlag = argv.findIndex((a) => a.startsWith('-'));
  const leading = firstFlag < 0 ? argv : argv.slice(0, firstFlag);
  const known = [leading.slice(0, 2).join(' '), leading[0] ?? ''].find((n) => n in COMMANDS);
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv, { strings: known ? COMMANDS[known]!.flags : [], booleans: ['json', ...((known && COMMANDS[known]!.booleans) || [])] });
  } catch (e) {
    err.write(`error: ${(e as Error).message}\n\n${ADMIN_HELP}`);
    return 2;
  }
  const words = parsed.positionals;
  const name = [words.slice(0, 2).join(' '), words[0] ?? ''].find((n) => n in COMMANDS);
  if (parsed.flags.help || !name) {
    if (!parsed.flags.help) err.write(words.length ? `error: unknown admin command "${words.join(' ')}"\n\n` : '');
    (parsed.flags.help ? out : err).write(ADMIN_HELP);
    return parsed.flags.help ? 0 : 2;
  }
  const offline = COMMANDS[name]!.withoutDatabase;
  if (offline) {
    try {
      const result = await offline(parsed);
      out.write(parsed.flags.json ? `${JSON.stringify(result)}\n` : `${humanize(result)}\n`);
      return 0;
    } catch (e) {
      if (!(e instanceof AdminError || e instanceof UsageError)) throw e;
      err.write(`error: ${e.message}\n`);
      return e instanceof UsageError ? 2 : 1;
    }
  }
  const config = loadConfig(env);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, connectTimeoutMs: 15_000 }).catch((e: unknown) => e as Error);
  if (database instanceof Error) {
    err.write(`error: ${cannotOpen(config, database)}\n`);
    return 1;
  }
  try {
    try {
      await migrate(database);
    } catch (e) {
      throw new AdminError(cannotOpen(config, e));
    }
    const result = await COMMANDS[name]!.run!(createAdminService(database.db, systemClock, config.sessions), parsed, { database, config, input });
    out.write(parsed.flags.json ? `${JSON.stringify(result)}\n` : `${humanize(result)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof AdminError || e instanceof UsageError || e instanceof MasterKeyError) {
      err.write(`error: ${e.message}\n`);
      return e instanceof UsageError ? 2 : 1;
    }
    throw e;
  } finally {
    await database.close();
  }
}
