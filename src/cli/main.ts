import { loadConfig, ConfigError } from '../config.js';

// Each command loads only its own modules: `wsp serve` is ready sooner without the operator
// commands and the client, and `wsp login` starts without the server.
const server = () => import('../server.js');
// The worker's own composition: no web server is built or loaded (src/worker.ts).
const worker = () => import('../worker.js');
const admin = () => import('./admin.js');
const client = () => import('./client/index.js');

const help = async () => {
  const [{ ADMIN_HELP }, { clientHelp }] = await Promise.all([admin(), client()]);
  return `wsp: the Workspace Platform command

  wsp serve [--no-worker]  run the HTTP API and, unless --no-worker, the job worker
  wsp worker             run only the job worker (renders, suspensions, expiry notices)
  wsp admin ...          operator commands (wsp admin --help)
  wsp --help             this text
  wsp --version          the version of this wsp

${clientHelp()}
${ADMIN_HELP}`;
};

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write('wsp serve [--no-worker]: run the HTTP API (and the job worker unless --no-worker). Settings come from the environment; see README.md.\n');
        return 0;
      }
      await (await server()).serve(loadConfig(), { worker: !rest.includes('--no-worker') });
      return -1; // keeps running
    case 'worker':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write('wsp worker: run the job worker alone, against the configured database.\n');
        return 0;
      }
      await (await worker()).work(loadConfig());
      return -1;
    case 'admin':
      return (await admin()).runAdmin(rest);
    case '--version':
    case '-V':
    case 'version': {
      const { packageVersion } = await import('../shared/package-root.js');
      process.stdout.write(`wsp ${packageVersion()}\n`);
      return 0;
    }
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      (command ? process.stdout : process.stderr).write(await help());
      return command ? 0 : 2;
    default: {
      const { isClientCommand, runClient, closestGroup } = await client();
      if (isClientCommand(command)) return runClient(argv);
      // A short answer to a typo: what it may have meant, and where the list is.
      const guess = closestGroup(command);
      process.stderr.write(`error: unknown command "${command}"${guess ? `; did you mean "wsp ${guess}"?` : ''}\nRun \`wsp --help\` for the list of commands.\n`);
      return 2;
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
