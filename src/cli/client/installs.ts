import { randomUUID } from 'node:crypto';
import { stringFlag, UsageError } from '../args.js';
import { apiAs, send } from './api.js';
import { idArg, intFlag, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { printFields, printJson } from './output.js';
import { waitForOperation } from './operations.js';

export const installsRestore: Command = {
  name: 'installs restore',
  usage: 'inst_ID --render rnd_ID [--timeout SECONDS]',
  summary: "restore a succeeded render as a new commit, and wait for it (progress on a terminal)",
  flags: ['render', 'timeout'],
  details: `Reads the install's etag for If-Match and sends an Idempotency-Key, so a retried request never restores twice.
Waits until the operation is done (default at most 600 s): exit 0 when it succeeded, 1 when it failed or timed out.`,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the install id', 'inst');
    noMoreArgs(ctx, 1);
    const renderId = stringFlag(ctx.args, 'render', true);
    if (!/^(rnd_)?[0-9A-Za-z]{1,60}$/.test(renderId)) throw new UsageError(`--render must look like rnd_<id>, got "${renderId}"`);
    const timeout = intFlag(ctx, 'timeout', 1, 86400) ?? 600;
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiAs(c);

    const install = await send(c.server, api.GET('/v1/installs/{id}', { params: { path: { id } } }));
    const restored = await send(
      c.server,
      api.POST('/v1/installs/{id}:restore', {
        params: { path: { id }, header: { 'if-match': install.etag, 'idempotency-key': randomUUID() } },
        body: { render_id: renderId },
      }),
    );
    const opId = restored.render.operation_id;

    const operation = await waitForOperation(ctx, c.server, api, opId, timeout, `Restoring ${restored.render.id} (operation ${opId})`);
    const render = await send(c.server, api.GET('/v1/renders/{id}', { params: { path: { id: restored.render.id } } }));
    if (ctx.json) printJson(ctx.io, { install: restored.install, render, operation });
    if (operation.error) throw new CliError(`restore failed: ${operation.error.message} [${operation.error.code}]`, EXIT.FAILED);
    if (ctx.json) return;
    printFields(ctx.io, [
      ['install', `${install.name} (${install.id})`],
      ['render', `${render.id} (${render.state})`],
      ['restored from', render.restored_from_render_id],
      ['commit', render.commit_sha],
    ]);
  },
};
