import { UsageError } from '../args.js';
import { apiAs, send } from './api.js';
import { arg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, writeCredentials } from './credentials.js';
import { printJson, printTable } from './output.js';

export const workspaceUse: Command = {
  name: 'workspace use',
  usage: 'ws_ID',
  summary: 'act in this workspace from now on (sent as Service-Context)',
  async run(ctx) {
    const id = arg(ctx, 0, 'the workspace id (ws_...)');
    noMoreArgs(ctx, 1);
    if (!/^ws_[0-9A-Za-z]{1,50}$/.test(id)) throw new UsageError(`a workspace id looks like ws_<id>, got "${id}"`);
    const c = requireCredentials(ctx.io.env);
    const wsId = id.toLowerCase();
    // Asked as that workspace: 403 when the user is not a member of it.
    const ws = await send(c.server, apiAs({ ...c, workspace: wsId }).GET('/v1/workspaces/{id}', { params: { path: { id: wsId } } }));
    writeCredentials({ ...c, workspace: ws.id }, ctx.io.env);
    if (ctx.json) return printJson(ctx.io, { workspace: ws.id, name: ws.name });
    ctx.io.out.write(`Acting in workspace ${ws.name} (${ws.id}).\n`);
  },
};

export const workspaceList: Command = {
  name: 'workspace list',
  usage: '',
  summary: 'the workspaces you belong to (* marks the one in use)',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireCredentials(ctx.io.env);
    const list = await send(c.server, apiAs({ ...c, workspace: null }).GET('/v1/workspaces'));
    if (ctx.json) return printJson(ctx.io, list);
    printTable(ctx.io, list.data, [
      ['', (w) => (w.id === c.workspace ? '*' : '')],
      ['id', (w) => w.id],
      ['name', (w) => w.name],
      ['role', (w) => w.role],
    ]);
  },
};
