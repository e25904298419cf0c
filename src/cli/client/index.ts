import { parseArgs, UsageError } from '../args.js';
import type { Command } from './command.js';
import { CliError, EXIT } from './exit-codes.js';
import { processIo, type Io } from './output.js';
import { login, logout, whoami } from './login.js';
import { workspaceList, workspaceQuotas, workspaceUse } from './workspace.js';
import { tokensCreate, tokensList, tokensRevoke } from './tokens.js';
import { sessionsList, sessionsRevoke } from './sessions.js';
import { invitationsCreate, invitationsList, invitationsRevoke, membersList, membersRemove, membersRole, workspaceCreate } from './members.js';
import { notificationsList, notificationsRead } from './notifications.js';
import { secretCommands } from './secrets.js';
import { dashboardsRevisions } from './dashboards.js';
import { installsRestore } from './installs.js';
import { computeCatalog, machinesDelete, machinesList, machinesResume } from './compute.js';
import { packagesPreview } from './packages.js';
import { auditList } from './audit.js';
import { WEBHOOK_COMMANDS } from './webhooks.js';
import { metricsList, metricsSeries } from './metrics.js';
import { rendersFiles } from './renders.js';
import { authGitCredential, authSetupGit } from './git-auth.js';
import { closest } from './suggest.js';

const COMMANDS: Command[] = [
  login,
  logout,
  whoami,
  authSetupGit,
  authGitCredential,
  workspaceUse,
  workspaceList,
  workspaceQuotas,
  workspaceCreate,
  membersList,
  membersRole,
  membersRemove,
  invitationsCreate,
  invitationsList,
  invitationsRevoke,
  tokensCreate,
  tokensList,
  tokensRevoke,
  sessionsList,
  sessionsRevoke,
  notificationsList,
  notificationsRead,
  ...secretCommands,
  dashboardsRevisions,
  metricsList,
  metricsSeries,
  installsRestore,
  rendersFiles,
  packagesPreview,
  computeCatalog,
  machinesList,
  machinesResume,
  machinesDelete,
  auditList,
  ...WEBHOOK_COMMANDS,
];

const GROUPS = new Set(COMMANDS.map((c) => c.name.split(' ')[0]!));

export const isClientCommand = (word: string | undefined) => word !== undefined && GROUPS.has(word);

/** The command group a mistyped first word most likely meant. */
export const closestGroup = (word: string) => closest(word, [...GROUPS, 'serve', 'worker', 'admin']);

const line = (c: Command) => {
  const head = `  wsp ${`${c.name} ${c.usage}`.trim()}`;
  // A long usage gets its summary on the next line rather than a ragged column.
  return head.length <= 56 ? `${head.padEnd(56)} ${c.summary}` : `${head}\n${' '.repeat(57)}${c.summary}`;
};

export const EXIT_CODES_HELP = `Exit codes: 0 ok; 1 the server refused (an API error), or a login or operation failed;
2 bad usage; 3 not logged in or login expired; 4 server unreachable.`;

export function clientHelp(): string {
  return `Client commands (on the server you log in to; every one takes --json and --help):
${COMMANDS.map(line).join('\n')}

Credentials: $WSP_CONFIG_DIR/credentials.json (default ~/.config/wsp), mode 0600.
${EXIT_CODES_HELP}
`;
}

function commandHelp(c: Command): string {
  return `usage: wsp ${`${c.name} ${c.usage}`.trim()} [--json]

${c.summary}.
${c.details ? `\n${c.details}\n` : ''}
${EXIT_CODES_HELP}
`;
}

const groupHelp = (group: string) => `wsp ${group}:\n${COMMANDS.filter((c) => c.name.split(' ')[0] === group).map(line).join('\n')}\n`;

/** Runs one client command; answers the process exit code (see EXIT). */
export async function runClient(argv: string[], io: Io = processIo()): Promise<number> {
  const [group = '', sub] = argv;
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  const command = COMMANDS.find((c) => c.name === group) ?? COMMANDS.find((c) => c.name === `${group} ${sub}`);
  if (!command) {
    if (wantsHelp) {
      io.out.write(groupHelp(group));
      return EXIT.OK;
    }
    const subs = COMMANDS.filter((c) => c.name.split(' ')[0] === group).map((c) => c.name.split(' ')[1] ?? '');
    const guess = sub && !sub.startsWith('-') ? closest(sub, subs) : undefined;
    const said = sub && !sub.startsWith('-') ? `error: unknown command "wsp ${group} ${sub}"${guess ? `; did you mean "wsp ${group} ${guess}"?` : ''}\n\n` : '';
    io.err.write(`${said}${groupHelp(group)}`);
    return EXIT.USAGE;
  }
  if (wantsHelp) {
    io.out.write(commandHelp(command));
    return EXIT.OK;
  }
  const rest = argv.slice(command.name.split(' ').length);
  try {
    const args = parseArgs(rest, { strings: command.flags ?? [], booleans: ['json', ...(command.booleans ?? [])] });
    await command.run({ io, args, json: args.flags.json === true });
    return EXIT.OK;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`error: ${err.message}\n\n${commandHelp(command)}`);
      return EXIT.USAGE;
    }
    if (err instanceof CliError) {
      io.err.write(`error: ${err.message}\n`);
      return err.exitCode;
    }
    io.err.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.FAILED;
  }
}
