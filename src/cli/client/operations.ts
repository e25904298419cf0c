import type { Operation, WspClient } from '@workspace-platform/sdk';
import { apiAs, send } from './api.js';
import { idArg, noMoreArgs, type Command, type CommandContext } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { durationOption } from './durations.js';
import { CliError, EXIT } from './exit-codes.js';
import { printFields, printJson, Spinner, time } from './output.js';

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

/** `--timeout` of the commands that wait, as they all read it. */
export const waitTimeout = (ctx: CommandContext) => durationOption(ctx.args.flags, 'timeout', 600, { min: 1, max: 86400 });

/** Every command that starts work waits for it unless told `--no-wait`: a script's next line may rely on it. */
export const noWait = (ctx: CommandContext) => ctx.args.flags['no-wait'] === true;

export const WAIT_USAGE = '[--timeout 10m] [--no-wait]';
export const WAIT_DETAILS =
  'Waits until the operation is done (default at most 10m): exit 0 when it succeeded, 1 when it failed (with its error) or timed out; --no-wait returns at once with the operation id.';

function printOperation(ctx: CommandContext, op: Operation): void {
  if (ctx.json) return printJson(ctx.io, op);
  printFields(ctx.io, [
    ['id', op.id],
    ['kind', op.kind],
    ['state', !op.done ? 'running' : op.error ? 'failed' : 'succeeded'],
    ['error', op.error ? `${op.error.message} [${op.error.code}]` : null],
    ['result', op.result ? JSON.stringify(op.result) : null],
    ['created', time(op.created_at)],
    ['updated', time(op.updated_at)],
  ]);
}

export const operationsGet: Command = {
  name: 'operations get',
  usage: 'op_ID',
  summary: 'an asynchronous operation: running, succeeded or failed, with its result or error',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the operation id', 'op');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    printOperation(ctx, await send(c.server, apiAs(c).GET('/v1/operations/{id}', { params: { path: { id } } })));
  },
};

export const operationsWait: Command = {
  name: 'operations wait',
  usage: 'op_ID [--timeout 10m]',
  summary: 'wait until an operation is done: exit 0 when it succeeded, 1 when it failed or timed out',
  flags: ['timeout'],
  async run(ctx) {
    const id = idArg(ctx, 0, 'the operation id', 'op');
    noMoreArgs(ctx, 1);
    const timeout = waitTimeout(ctx);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const op = await waitForOperation(ctx, c.server, apiAs(c), id, timeout, `Waiting for ${id}`);
    printOperation(ctx, op);
    if (op.error) throw new CliError(`operation ${op.id} failed: ${op.error.message} [${op.error.code}]`, EXIT.FAILED);
  },
};
