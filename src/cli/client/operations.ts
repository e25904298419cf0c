import type { WspClient } from '@workspace-platform/sdk';
import { send } from './api.js';
import type { CommandContext } from './command.js';
import { CliError, EXIT } from './exit-codes.js';
import { Spinner } from './output.js';

const POLL_MS = 1000;

/**
 * Waits until an operation is done and answers it. Progress: a spinner with the elapsed time on
 * a terminal; in a pipe, a line on stderr when waiting starts and ends; nothing with --json.
 */
export async function waitForOperation(ctx: CommandContext, server: string, api: WspClient, opId: string, timeoutSeconds: number, waiting: string) {
  const spinner = Spinner.for(ctx.io, ctx.json);
  const lines = !ctx.json && !ctx.io.out.isTTY;
  const started = Date.now();
  spinner.start(`${waiting}…`);
  if (lines) ctx.io.err.write(`${waiting}…\n`);
  let operation;
  try {
    for (;;) {
      operation = await send(server, api.GET('/v1/operations/{id}', { params: { path: { id: opId } } }));
      if (operation.done) break;
      const seconds = Math.round((Date.now() - started) / 1000);
      if (seconds >= timeoutSeconds) throw new CliError(`operation ${opId} not done after ${timeoutSeconds} s; see GET /v1/operations/${opId}`, EXIT.FAILED);
      spinner.update(`${waiting}: running, ${seconds} s`);
      await ctx.io.sleep(POLL_MS);
    }
  } finally {
    spinner.stop();
  }
  if (lines) ctx.io.err.write(`Operation ${opId} ${operation.error ? 'failed' : 'succeeded'} after ${Math.round((Date.now() - started) / 1000)} s.\n`);
  return operation;
}
