import { Command as Commander, CommanderError, InvalidArgumentError, Option } from 'commander';
import { UsageError, type Parsed } from '../args.js';
import type { Command } from './command.js';
import { CliError, EXIT } from './exit-codes.js';
import { timeStyleFor, type Io } from './output.js';
import { packageVersion } from '../../shared/package-root.js';

/** What each group of commands is for, in `wsp --help`. */
export const GROUPS: Record<string, string> = {
  auth: 'git access with your login',
  workspace: 'the workspace you act in: choose, list, create, rename, quotas',
  members: "the workspace's people and their roles",
  invitations: 'invite people to the workspace',
  tokens: 'workspace API tokens',
  sessions: 'your signed-in sessions',
  notifications: 'your notifications',
  secrets: 'secrets and their versions',
  dashboards: 'dashboards, their revisions and restores',
  snippets: 'the queries dashboard widgets show',
  metrics: "the platform's metrics of the workspace",
  packages: 'packages of templates and their versions',
  installs: 'installs of packages, rendered into git repositories',
  renders: 'renders of installs and their files',
  compute: 'the provider catalog, compute configs and suspensions',
  'compute configs': 'compute configs: where and from what machines are made',
  'compute suspensions': 'suspended machines: what they cost, when they expire',
  machines: 'machines: create, suspend, resume, delete',
  operations: 'asynchronous operations: look one up, or wait for it',
  audit: 'the audit log',
  webhooks: 'webhook endpoints and their deliveries',
};

/** The commands `main` runs itself (they are not clients of a server); listed in help. */
export const SERVER_COMMANDS: [name: string, usage: string, summary: string][] = [
  ['serve', '[--no-worker]', 'run the HTTP API and, unless --no-worker, the job worker'],
  ['worker', '', 'run only the job worker (renders, suspensions, expiry notices)'],
  ['admin', '...', 'operator commands on the database (wsp admin --help)'],
];

export const EXIT_CODES_HELP = `Exit codes: 0 ok; 1 the server refused (an API error), or a login or operation failed;
2 bad usage; 3 not logged in or login expired; 4 server unreachable.`;

const ENVIRONMENT_HELP = `Environment: WSP_TOKEN (a token to use instead of the stored login), WSP_SERVER, WSP_WORKSPACE,
WSP_CONFIG_DIR (where the login is stored; default ~/.config/wsp).`;

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The placeholder a flag's usage shows (`--expires-in 30d` -> `30d`), else VALUE. */
function placeholder(c: Command, flag: string): string {
  return new RegExp(`--${flag}[ =]([^\\s\\]|]+)`).exec(c.usage)?.[1] ?? 'VALUE';
}

/** Commander's options of a command, back into the flags the command reads. */
function parsedOf(c: Command, positionals: string[], opts: Record<string, unknown>): Parsed {
  const flags: Parsed['flags'] = {};
  const lists: Record<string, string[]> = {};
  for (const f of c.flags ?? []) if (typeof opts[camel(f)] === 'string') flags[f] = opts[camel(f)] as string;
  for (const f of c.lists ?? []) lists[f] = (opts[camel(f)] as string[] | undefined) ?? [];
  for (const b of c.booleans ?? []) {
    const on = b.startsWith('no-') ? opts[camel(b.slice(3))] === false : opts[camel(b)] === true;
    if (on) flags[b] = true;
  }
  return { positionals, flags, lists };
}

const usageHint = (c: Command) => `usage: wsp ${`${c.name} ${c.usage}`.trim()}\nRun \`wsp ${c.name} --help\` for more.`;

/** How a command is listed under its group: its name and usage, the usage cut before its options when long. */
function subcommandTerm(cmd: Commander): string {
  const usage = cmd.usage() === '[--json]' ? '' : cmd.usage();
  const short = usage.length <= 32 || !usage.includes('[') ? usage : `${usage.slice(0, usage.indexOf('[')).trim()} [options]`;
  return `${cmd.name()} ${short}`.trim();
}

/** A command of the table as a commander command under `parent`. */
function define(parent: Commander, word: string, c: Command, io: Io): void {
  const cmd = parent
    .command(word)
    .usage(c.usage || '[--json]')
    .summary(c.summary)
    .description(`${c.summary.charAt(0).toUpperCase()}${c.summary.slice(1)}.${c.details ? `\n\n${c.details}` : ''}`)
    .argument('[arguments...]')
    .showHelpAfterError(usageHint(c))
    .addHelpText('after', `\n${EXIT_CODES_HELP}`);
  // A flag where a value belongs is that flag, not the value (`--name --json`): commander would
  // take any next word as the value.
  const flagWords = new Set([...[...(c.flags ?? []), ...(c.lists ?? []), ...(c.booleans ?? []), ...GLOBAL_FLAGS, 'help', 'version'].map((f) => `--${f}`), '-y', '-h', '-V']);
  for (const s of Object.values(c.shorts ?? {})) flagWords.add(`-${s}`);
  const value = (v: string) => {
    if (flagWords.has(v)) throw new InvalidArgumentError(NEEDS_A_VALUE);
    return v;
  };
  for (const f of c.flags ?? []) cmd.addOption(new Option(`${c.shorts?.[f] ? `-${c.shorts[f]}, ` : ''}--${f} <${placeholder(c, f)}>`).argParser(value));
  for (const f of c.lists ?? []) {
    cmd.addOption(new Option(`${c.shorts?.[f] ? `-${c.shorts[f]}, ` : ''}--${f} <${placeholder(c, f)}>`).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), value(v)]));
  }
  for (const b of c.booleans ?? []) cmd.addOption(new Option(`${c.shorts?.[b] ? `-${c.shorts[b]}, ` : ''}--${b}`));
  globalFlags(cmd);
  cmd.action(async (positionals: string[], _opts: unknown, self: Commander) => {
    const globals = self.optsWithGlobals<{ json?: boolean; yes?: boolean }>();
    timeStyleFor(io);
    try {
      await c.run({ io, args: parsedOf(c, positionals, self.opts()), json: globals.json === true, yes: globals.yes === true });
    } catch (err) {
      if (err instanceof UsageError) throw new CommandUsageError(err.message, c);
      throw err;
    }
  });
}

/**
 * The global flags that may come after a command too (`wsp secrets list --json`). The program
 * reads its own options only before the command (commander's positional options): read anywhere,
 * a global flag shadowed a command's own of the same name, so `wsp secrets access sec_X --version
 * secv_Y` printed the program's version and exited 0. `--version` counts only before the command,
 * as git's and gh's do; `--json` and `--yes` are declared again on every command and group (hidden
 * from their help, which lists the program's global options).
 */
export const GLOBAL_FLAGS = ['json', 'yes'] as const;
const NEEDS_A_VALUE = 'needs a value';
function globalFlags(cmd: Commander): Commander {
  cmd.addOption(new Option('--json').hideHelp());
  cmd.addOption(new Option('-y, --yes').hideHelp());
  return cmd;
}

/** A usage error raised by a command's own checks, with the command it belongs to. */
class CommandUsageError extends Error {
  constructor(
    message: string,
    readonly command: Command,
  ) {
    super(message);
  }
}

/** Where commander writes, and its errors rephrased with the command they belong to (`wsp tokens`). */
const output = (io: Io, errors: { write(text: string): void }, prefix: string) => ({
  writeOut: (s: string) => io.out.write(s),
  writeErr: (s: string) => errors.write(s),
  outputError: (s: string, write: (s: string) => void) => write(rephrase(s, prefix)),
});

export function buildProgram(commands: readonly Command[], io: Io, errors: { write(text: string): void }): Commander {
  const program = new Commander('wsp')
    .usage('<command> [arguments] [--json] [--yes]')
    .description('The Workspace Platform command: run the server, or work with one as a client.')
    .version(`wsp ${packageVersion()}`, '-V, --version', 'print the version of wsp (before any command: `wsp --version`)')
    .enablePositionalOptions()
    .option('--json', 'print one JSON document on stdout (errors as one on stderr); times in ISO 8601')
    .option('-y, --yes', 'answer yes to confirmations (needed for destructive commands outside a terminal)')
    .helpCommand('help [command]', 'help for a command')
    .configureOutput(output(io, errors, 'wsp'))
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false, subcommandTerm })
    .exitOverride()
    .showHelpAfterError('Run `wsp --help` for the list of commands.')
    .addHelpText('after', `\n${ENVIRONMENT_HELP}\n${EXIT_CODES_HELP}`);
  for (const [name, usage, summary] of SERVER_COMMANDS) {
    program
      .command(name)
      .usage(usage || '[--json]')
      .summary(summary)
      .allowUnknownOption()
      .helpOption(false)
      .argument('[arguments...]')
      .action(() => {
        throw new CliError(`"wsp ${name}" runs from the command line only`, EXIT.USAGE);
      });
  }
  // A command's words but the last are groups (`compute configs list`): made on first use.
  const groups = new Map<string, Commander>([['', program]]);
  const groupOf = (words: string[]): Commander => {
    const key = words.join(' ');
    const known = groups.get(key);
    if (known) return known;
    const parent = groupOf(words.slice(0, -1));
    const about = GROUPS[key] ?? '';
    const made = parent
      .command(words[words.length - 1]!)
      .usage('<command> [arguments]')
      .summary(about)
      .description(about)
      .helpCommand(false)
      .configureOutput(output(io, errors, `wsp ${key}`))
      .configureHelp({ showGlobalOptions: true, sortSubcommands: false, subcommandTerm })
      .showHelpAfterError(`Run \`wsp ${key} --help\` for its commands.`);
    globalFlags(made);
    groups.set(key, made);
    return made;
  };
  for (const c of commands) {
    const words = c.name.split(' ');
    define(groupOf(words.slice(0, -1)), words[words.length - 1]!, c, io);
  }
  return program;
}

/**
 * Commander's messages in this CLI's words: flags are "flags", a missing value is named as the
 * command's own checks name it, and a suggestion ends the line it belongs to.
 */
export function rephrase(message: string, prefix = 'wsp'): string {
  // A word under a group is named with it (`wsp secrets lsit`); a first word alone.
  const named = prefix === 'wsp' ? '' : `${prefix} `;
  return message
    .replace(/^error: unknown option '([^']+)'\n\(Did you mean ([^?]+)\?\)/m, 'error: unknown flag $1; did you mean $2?')
    .replace(/^error: unknown option '([^']+)'/m, 'error: unknown flag $1')
    .replace(/^error: unknown command '([^']+)'\n\(Did you mean ([^?]+)\?\)/m, `error: unknown command "${named}$1"; did you mean "${prefix} $2"?`)
    .replace(/^error: unknown command '([^']+)'/m, `error: unknown command "${named}$1"`)
    .replace(/^error: option '(-\w, )?(--[\w-]+)(?: <[^>]*>)?' argument missing/m, 'error: $2 needs a value')
    .replace(/^error: option '(-\w, )?(--[\w-]+)(?: <[^>]*>)?' argument '[^']*' is invalid\. needs a value/m, 'error: $2 needs a value');
}

/** A failure as `--json` prints it on stderr: one document, with the API's envelope entries when there were some. */
function errorDocument(message: string, exitCode: number, err?: unknown): string {
  const kind = { [EXIT.USAGE]: 'usage', [EXIT.NOT_LOGGED_IN]: 'not_logged_in', [EXIT.UNREACHABLE]: 'unreachable' }[exitCode] ?? (err instanceof CliError && err.api ? 'api' : 'failed');
  const api = err instanceof CliError && err.api ? { status: err.api.status, errors: err.api.errors } : {};
  return `${JSON.stringify({ error: { kind, message, exit_code: exitCode, ...api } })}\n`;
}

/**
 * Runs the client side of `wsp` (every command but serve, worker and admin, which main runs):
 * answers the process exit code (see EXIT). Global flags (--json, --yes) may come anywhere.
 */
export async function runProgram(commands: readonly Command[], argv: string[], io: Io): Promise<number> {
  const dashdash = argv.indexOf('--');
  const json = (dashdash === -1 ? argv : argv.slice(0, dashdash)).includes('--json');
  // Under --json, commander's own messages (unknown command, missing value) are gathered and
  // printed as one JSON document; help asked for still goes to stdout.
  let said = '';
  const errors = { write: (text: string) => (json ? (said += text) : io.err.write(text)) };
  const program = buildProgram(commands, io, errors);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.OK;
      if (json)
        io.err.write(
          errorDocument(
            said
              .trim()
              .split('\n')[0]!
              .replace(/^error: /, '') || err.message,
            EXIT.USAGE,
          ),
        );
      return EXIT.USAGE;
    }
    if (err instanceof CommandUsageError) {
      io.err.write(json ? errorDocument(err.message, EXIT.USAGE) : `error: ${err.message}\n${usageHint(err.command)}\n`);
      return EXIT.USAGE;
    }
    const exitCode = err instanceof CliError ? err.exitCode : EXIT.FAILED;
    // `wsp login` cannot help a command that runs with WSP_TOKEN: that token wins over any login.
    const tokenRefused = err instanceof CliError && err.api?.status === 401 && Boolean(io.env.WSP_TOKEN?.trim());
    const message = tokenRefused
      ? 'the server refused the token in WSP_TOKEN (unknown, expired or revoked): set a valid token, or unset WSP_TOKEN to use your login'
      : err instanceof Error
        ? err.message
        : String(err);
    io.err.write(json ? errorDocument(message, exitCode, err) : `error: ${message}\n`);
    return exitCode;
  }
}
