import { UsageError } from '../args.js';
import { apiAs, send } from './api.js';
import { arg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace, writeCredentials } from './credentials.js';
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

/** 8388608 → "8 MiB"; figures of bytes stay readable in a table. */
function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1 && n % 1024 === 0) {
    n /= 1024;
    i++;
  }
  return `${n} ${units[i]}`;
}

export const workspaceQuotas: Command = {
  name: 'workspace quotas',
  usage: '',
  summary: "the workspace's quotas and how much of each it uses",
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const q = await send(c.server, apiAs(c).GET('/v1/workspaces/{id}/quotas', { params: { path: { id: c.workspace } } }));
    if (ctx.json) return printJson(ctx.io, q);
    const rows: [string, string, string][] = [
      ['renders an hour', String(q.renders_per_hour.used), String(q.renders_per_hour.limit)],
      ['API tokens', String(q.api_tokens.used), String(q.api_tokens.limit)],
      ['output per render', '-', bytes(q.render_output_bytes.limit)],
      ['repository per install', q.repository_bytes.install_id ? `${q.repository_bytes.used} B (${q.repository_bytes.install_id})` : '-', bytes(q.repository_bytes.limit)],
      ['repositories together', `${q.workspace_repository_bytes.used} B`, bytes(q.workspace_repository_bytes.limit)],
      ['workspaces you own', q.workspaces_per_user.used === null ? '-' : String(q.workspaces_per_user.used), String(q.workspaces_per_user.limit)],
    ];
    printTable(ctx.io, rows, [
      ['quota', (r) => r[0]],
      ['used', (r) => r[1]],
      ['limit', (r) => r[2]],
    ]);
  },
};

export const workspaceRename: Command = {
  name: 'workspace rename',
  usage: 'NAME',
  summary: 'rename the workspace in use (owner or admin)',
  async run(ctx) {
    const name = arg(ctx, 0, 'the new name');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiAs(c);
    const current = await send(c.server, api.GET('/v1/workspaces/{id}', { params: { path: { id: c.workspace } } }));
    const ws = await send(c.server, api.PATCH('/v1/workspaces/{id}', { params: { path: { id: c.workspace }, header: { 'if-match': current.etag } }, body: { name } }));
    if (ctx.json) return printJson(ctx.io, ws);
    ctx.io.out.write(`Renamed ${ws.id} to ${ws.name}.\n`);
  },
};
