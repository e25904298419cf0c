import { loadConfig, ConfigError } from '../config.js';

// Each command loads only its own modules: `wsp serve` is ready sooner without the operator
// commands and the client, and `wsp login` starts without the server.
const server = () => import('../server.js');
// The worker's own composition: no web server is built or loaded (src/worker.ts).
const worker = () => import('../worker.js');
const admin = () => import('./admin.js');
const client = () => import('./client/index.js');

/**
 * serve, worker and admin are run here, with their own flags; every other command (and help,
 * --version) by the client's program (src/cli/client/program.ts), which lists these three too.
 * Global flags given before them (`wsp --json admin ...`) are passed on after the command.
 */
export async function main(argv: string[]): Promise<number> {
  const at = argv.findIndex((a) => !a.startsWith('-'));
  const command = at === -1 ? undefined : argv[at];
  const rest = at === -1 ? [] : [...argv.slice(at + 1), ...argv.slice(0, at)];
  switch (command) {
    case 'serve':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write('usage: wsp serve [--no-worker]\n\nRun the HTTP API (and the job worker unless --no-worker). Settings come from the environment; see README.md.\n');
        return 0;
      }
      await (await server()).serve(loadConfig(), { worker: !rest.includes('--no-worker') });
      return -1; // keeps running
    case 'worker':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write('usage: wsp worker\n\nRun the job worker alone, against the configured database.\n');
        return 0;
      }
      await (await worker()).work(loadConfig());
      return -1;
    case 'admin':
      return (await admin()).runAdmin(rest);
    default:
      return (await client()).runClient(argv);
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
