import { loadConfig } from '../config.js';
import { migrate, openDatabase } from '../db/database.js';
import { systemClock } from '../shared/clock.js';
import { AdminError, createAdminService, type AdminService } from '../admin/service.js';
import { parseArgs, stringFlag, UsageError, type Parsed } from './args.js';

export const ADMIN_HELP = `wsp admin: operator commands, run against the configured database (WSP_DATA_DIR or DATABASE_URL),
which they create and migrate if needed. --json prints one JSON object.

  wsp admin bootstrap [--json]                      a workspace, an owner, a session token and an API token
  wsp admin workspace create --name N [--json]      -> {workspace_id}
  wsp admin user create [--name N] [--email E] [--json]  -> {user_id}
  wsp admin user link --user USR --subject SUB      link an external JWT subject to a user
  wsp admin member add --workspace WS --user USR --role owner|admin|member
  wsp admin session create --user USR [--json]      -> {session_token}
  wsp admin migrate                                 apply pending migrations
`;

type Command = (svc: AdminService, p: Parsed) => Promise<Record<string, unknown>>;

const COMMANDS: Record<string, Command> = {
  bootstrap: (svc) => svc.bootstrap(),
  'workspace create': (svc, p) => svc.createWorkspace(stringFlag(p, 'name', true)),
  'user create': (svc, p) => svc.createUser({ name: stringFlag(p, 'name'), email: stringFlag(p, 'email') }),
  'user link': (svc, p) => svc.linkSubject(stringFlag(p, 'user', true), stringFlag(p, 'subject', true)),
  'member add': (svc, p) => svc.addMember(stringFlag(p, 'workspace', true), stringFlag(p, 'user', true), stringFlag(p, 'role', true)),
  'session create': (svc, p) => svc.createSession(stringFlag(p, 'user', true)),
  migrate: async () => ({ migrated: true }),
};

function humanize(result: Record<string, unknown>): string {
  return Object.entries(result)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join('\n');
}

/** Runs one admin command; returns the process exit code. */
export async function runAdmin(argv: string[], out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv, ['json', 'help']);
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
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await migrate(database);
    const result = await COMMANDS[name]!(createAdminService(database.db, systemClock), parsed);
    out.write(parsed.flags.json ? `${JSON.stringify(result)}\n` : `${humanize(result)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof AdminError || e instanceof UsageError) {
      err.write(`error: ${e.message}\n`);
      return e instanceof UsageError ? 2 : 1;
    }
    throw e;
  } finally {
    await database.close();
  }
}
