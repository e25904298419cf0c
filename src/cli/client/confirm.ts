import readline from 'node:readline';
import { UsageError } from '../args.js';
import type { CommandContext } from './command.js';
import { CliError, EXIT } from './exit-codes.js';

/**
 * Asks before something that cannot be undone. --yes answers for the person; on a terminal the
 * question goes to stderr and the answer is read from stdin (only y or yes goes on); anywhere
 * else (a script, CI) the command refuses without --yes rather than guess.
 */
export async function confirm(ctx: CommandContext, action: string, consequence = '', irreversible = true): Promise<void> {
  if (ctx.yes) return;
  // A merge can be undone (a restore), but it changes what a deployment pulls: it is asked too.
  const why = irreversible ? 'this cannot be undone' : "this changes the install's main branch";
  if (!(ctx.io.stdin.isTTY && ctx.io.err.isTTY)) throw new UsageError(`${action}: ${why}, so pass --yes to confirm (there is no terminal to ask on)`);
  ctx.io.err.write(`${action}?${consequence ? ` ${consequence}` : ''}${irreversible ? ' This cannot be undone.' : ''} [y/N] `);
  const rl = readline.createInterface({ input: ctx.io.stdin, terminal: false });
  const answer = await new Promise<string>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(''));
  });
  rl.close();
  if (!/^\s*y(es)?\s*$/i.test(answer)) throw new CliError('Cancelled; nothing was changed.', EXIT.FAILED);
}
