import { UsageError, stringFlag } from '../args.js';
import { send, workspaceClient } from './api.js';
import { deleteCommand } from './deletes.js';
import { readJsonObject } from './input.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { idArg, noMoreArgs, type Command, type CommandContext } from './command.js';
import { printFields, printJson, time } from './output.js';
import type { Dashboard } from '@workspace-platform/sdk';

/** The spec's page size bound for revisions. */
const PAGE = 10;

function printDashboard(ctx: CommandContext, d: Dashboard): void {
  if (ctx.json) return printJson(ctx.io, d);
  printFields(ctx.io, [
    ['id', d.id],
    ['name', d.name],
    ['purpose', d.purpose],
    ['description', d.description],
    ['filters', d.filter_definitions.map((f) => f.key).join(' ') || '-'],
    ['widgets', d.widgets.length],
    ['revision', d.current_revision_id],
    ['updated', time(d.updated_at)],
  ]);
}

export const dashboardsList: Command = {
  name: 'dashboards list',
  usage: listUsage(100),
  summary: "the workspace's dashboards",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/dashboards', { params: { query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (d) => d.id],
        ['name', (d) => d.name],
        ['purpose', (d) => d.purpose],
        ['widgets', (d) => d.widgets.length],
        ['updated', (d) => time(d.updated_at)],
      ],
      'No dashboards.',
    );
  },
};

export const dashboardsGet: Command = {
  name: 'dashboards get',
  usage: 'dash_ID',
  summary: 'one dashboard: its filters, widgets and current revision (--json: all of it)',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the dashboard id', 'dash');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    printDashboard(ctx, await send(c.server, api.GET('/v1/dashboards/{id}', { params: { path: { id } } })));
  },
};

export const dashboardsCreate: Command = {
  name: 'dashboards create',
  usage: '--name NAME | --file dashboard.json',
  summary: 'make a dashboard: an empty one by name, or one from a JSON body',
  flags: ['name', 'file'],
  details: '--file FILE ("-": stdin) is the body of POST /v1/dashboards: name, purpose, filter_definitions, default_filter_values and widgets. --name alone makes an empty custom dashboard.',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const name = stringFlag(ctx.args, 'name');
    const file = stringFlag(ctx.args, 'file');
    if ((name === undefined) === (file === undefined)) throw new UsageError('give --name NAME or --file FILE (one of them)');
    const body = file !== undefined ? await readJsonObject(ctx.io, 'file', file) : { name, purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] };
    const { c, api } = workspaceClient(ctx);
    const made = await send(c.server, api.POST('/v1/dashboards', { body: body as never }));
    if (ctx.json) return printJson(ctx.io, made);
    ctx.io.out.write(`Created dashboard ${made.name} (${made.id}).\n`);
  },
};

export const dashboardsUpdate: Command = {
  name: 'dashboards update',
  usage: 'dash_ID [--name NAME] [--description TEXT] [--file changes.json] [--summary TEXT]',
  summary: 'change a dashboard (a new revision); refused if someone changed it since it was read',
  flags: ['name', 'description', 'file', 'summary'],
  details:
    '--file FILE ("-": stdin) holds fields of PATCH /v1/dashboards/{id} (each replaces that field); --name, --description and --summary are added to it. The dashboard is read first and written under its etag (If-Match).',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the dashboard id', 'dash');
    noMoreArgs(ctx, 1);
    const file = stringFlag(ctx.args, 'file');
    const fields = Object.fromEntries((['name', 'description', 'summary'] as const).flatMap((f) => (typeof ctx.args.flags[f] === 'string' ? [[f, ctx.args.flags[f]]] : [])));
    const body = { ...(file !== undefined ? await readJsonObject(ctx.io, 'file', file) : {}), ...fields };
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name, --description or --file');
    const { c, api } = workspaceClient(ctx);
    const current = await send(c.server, api.GET('/v1/dashboards/{id}', { params: { path: { id } } }));
    const changed = await send(c.server, api.PATCH('/v1/dashboards/{id}', { params: { path: { id }, header: { 'if-match': current.etag } }, body: body as never }));
    printDashboard(ctx, changed);
  },
};

export const dashboardsDelete = deleteCommand({
  name: 'dashboards delete',
  summary: 'delete a dashboard and its revisions',
  noun: 'dashboard',
  prefix: 'dash',
  path: '/v1/dashboards/{id}',
  consequence: 'Its revisions go with it.',
});

export const dashboardsRevisions: Command = {
  name: 'dashboards revisions',
  usage: `dash_ID ${listUsage(PAGE)}`,
  summary: "a dashboard's revisions, newest first",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the dashboard id', 'dash');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    const revisions = await listed(ctx, c.server, PAGE, (query) => api.GET('/v1/dashboards/{id}/revisions', { params: { path: { id }, query } }));
    printListed(
      ctx,
      revisions,
      [
        ['id', (r) => r.id],
        ['source', (r) => r.source],
        ['created', (r) => time(r.created_at)],
        ['author', (r) => r.author_id],
        ['restored from', (r) => r.restored_from_revision_id],
        ['summary', (r) => r.summary],
      ],
      'No revisions.',
    );
  },
};

/** restore and reset: a new revision from an old one (or from the default layout), under the dashboard's etag. */
function revisionAction(action: 'restore' | 'reset'): Command {
  return {
    name: `dashboards ${action}`,
    usage: action === 'restore' ? 'dash_ID drev_ID [--summary TEXT]' : 'dash_ID [--summary TEXT]',
    summary: action === 'restore' ? 'make an old revision current again (as a new revision)' : 'put the default layout back (as a new revision)',
    flags: ['summary'],
    async run(ctx) {
      const id = idArg(ctx, 0, 'the dashboard id', 'dash');
      const revisionId = action === 'restore' ? idArg(ctx, 1, 'the revision id', 'drev') : undefined;
      noMoreArgs(ctx, action === 'restore' ? 2 : 1);
      const summary = stringFlag(ctx.args, 'summary');
      const { c, api } = workspaceClient(ctx);
      const current = await send(c.server, api.GET('/v1/dashboards/{id}', { params: { path: { id } } }));
      const header = { 'if-match': current.etag };
      const body = summary !== undefined ? { summary } : null;
      const changed =
        revisionId === undefined
          ? await send(c.server, api.POST('/v1/dashboards/{id}:reset', { params: { path: { id }, header }, body }))
          : await send(c.server, api.POST('/v1/dashboards/{id}/revisions/{revision_id}:restore', { params: { path: { id, revision_id: revisionId }, header }, body }));
      printDashboard(ctx, changed);
    },
  };
}

export const dashboardsRestore = revisionAction('restore');
export const dashboardsReset = revisionAction('reset');

export const DASHBOARD_COMMANDS = [dashboardsList, dashboardsGet, dashboardsCreate, dashboardsUpdate, dashboardsDelete, dashboardsRevisions, dashboardsRestore, dashboardsReset];
