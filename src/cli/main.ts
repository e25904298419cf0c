import { loadConfig, ConfigError } from '../config.js';
import { serve } from '../server.js';
import { ADMIN_HELP, runAdmin } from './admin.js';

const HELP = `wsp: the Workspace Platform command

  wsp serve              run the HTTP API (PORT, WSP_DATA_DIR or DATABASE_URL, ...)
  wsp admin ...          operator commands (wsp admin --help)
  wsp --help             this text

${ADMIN_HELP}`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write('wsp serve: run the HTTP API. Settings come from the environment; see README.md.\n');
        return 0;
      }
      await serve(loadConfig());
      return -1; // keeps running
    case 'admin':
      return runAdmin(rest);
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      (command ? process.stdout : process.stderr).write(HELP);
      return command ? 0 : 2;
    default:
      process.stderr.write(`error: unknown command "${command}"\n\n${HELP}`);
      return 2;
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
