import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { UsageError } from '../args.js';
import { arg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, readCredentials } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * `wsp auth setup-git`: makes git ask this CLI for the credential of the server logged in to,
 * so `git clone <clone_url>` and later fetches just work (as `gh auth setup-git` does).
 */
export const authSetupGit: Command = {
  name: 'auth setup-git',
  usage: '',
  summary: "let git clone and fetch install repositories with this login (a credential helper in git's global config)",
  details:
    'Sets credential.<server>.helper in your global git configuration to `wsp auth git-credential`, for the server you are logged in to only. ' +
    'git then sends the login (as the password of HTTP Basic, the workspace as the user name) when the server asks.',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireCredentials(ctx.io.env);
    const server = new URL(c.server).origin;
    // The program running now (node and bin/wsp.js, symlinks resolved): what git will start.
    const helper = `!${shellQuote(process.execPath)} ${shellQuote(fs.realpathSync(process.argv[1]!))} auth git-credential`;
    try {
      execFileSync('git', ['config', '--global', '--replace-all', `credential.${server}.helper`, helper], { env: { ...process.env, ...ctx.io.env }, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      throw new CliError(`git config failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`, EXIT.FAILED);
    }
    if (ctx.json) return void ctx.io.out.write(`${JSON.stringify({ server, helper })}\n`);
    ctx.io.out.write(`git now asks wsp for the credential of ${server}: git clone <clone_url> works as you.\n`);
  },
};

/** git's credential helper protocol (gitcredentials(7)): `get` answers with the login for its server; `store` and `erase` do nothing. */
export const authGitCredential: Command = {
  name: 'auth git-credential',
  usage: 'get|store|erase',
  summary: 'the credential helper git calls (set up by `wsp auth setup-git`)',
  async run(ctx) {
    const action = arg(ctx, 0, 'the action git asks for (get, store or erase)');
    noMoreArgs(ctx, 1);
    if (!['get', 'store', 'erase'].includes(action)) throw new UsageError(`unknown action "${action}": git asks for get, store or erase`);
    let input = '';
    for await (const chunk of ctx.io.stdin) input += String(chunk);
    if (action !== 'get') return;
    const asked = Object.fromEntries(
      input
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    const c = readCredentials(ctx.io.env);
    if (!c) return;
    const server = new URL(c.server);
    // Only for the server logged in to: a helper never hands the login to another host.
    if (`${asked.protocol}:` !== server.protocol || asked.host !== server.host) return;
    ctx.io.out.write(`username=${c.workspace ?? 'wsp'}\npassword=${c.token}\n`);
  },
};
