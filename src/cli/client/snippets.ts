import { UsageError, stringFlag } from '../args.js';
import { send, workspaceClient } from './api.js';
import { deleteCommand } from './deletes.js';
import { readText } from './input.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { idArg, noMoreArgs, type Command, type CommandContext } from './command.js';
import { printFields, printJson, time } from './output.js';
import type { Snippet } from '@workspace-platform/sdk';

function printSnippet(ctx: CommandContext, s: Snippet, verb?: string): void {
  if (ctx.json) return printJson(ctx.io, s);
  if (verb) ctx.io.err.write(`${verb} ${s.id}.\n`);
  printFields(ctx.io, [
    ['id', s.id],
    ['name', s.name],
    ['state', s.state],
    ['display', s.display_type],
    ['updated', time(s.updated_at)],
  ]);
  ctx.io.out.write(`\n${s.source}${s.source.endsWith('\n') ? '' : '\n'}`);
}

/** `--source FILE` ("-": stdin) and the other fields of a snippet's body, as given. */
async function snippetFields(ctx: CommandContext): Promise<Record<string, unknown>> {
  const source = stringFlag(ctx.args, 'source');
  const display = stringFlag(ctx.args, 'display');
  return {
    ...(typeof ctx.args.flags.name === 'string' ? { name: ctx.args.flags.name } : {}),
    ...(source !== undefined ? { source: await readText(ctx.io, source) } : {}),
    ...(display !== undefined ? { display_type: display === 'none' ? null : display } : {}),
  };
}

export const snippetsList: Command = {
  name: 'snippets list',
  usage: listUsage(100),
  summary: "the workspace's snippets",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const { c, api } = workspaceClient(ctx);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/snippets', { params: { query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (s) => s.id],
        ['name', (s) => s.name],
        ['state', (s) => s.state],
        ['display', (s) => s.display_type],
        ['updated', (s) => time(s.updated_at)],
      ],
      'No snippets.',
    );
  },
};

export const snippetsGet: Command = {
  name: 'snippets get',
  usage: 'snp_ID',
  summary: 'one snippet, with its source',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the snippet id', 'snp');
    noMoreArgs(ctx, 1);
    const { c, api } = workspaceClient(ctx);
    printSnippet(ctx, await send(c.server, api.GET('/v1/snippets/{id}', { params: { path: { id } } })));
  },
};

export const snippetsCreate: Command = {
  name: 'snippets create',
  usage: '--name NAME --source FILE [--display table|stat|json|logs|timeseries]',
  summary: 'make a snippet from a source file ("-": stdin)',
  flags: ['name', 'source', 'display'],
  async run(ctx) {
    noMoreArgs(ctx, 0);
    stringFlag(ctx.args, 'name', true);
    stringFlag(ctx.args, 'source', true);
    const body = await snippetFields(ctx);
    const { c, api } = workspaceClient(ctx);
    printSnippet(ctx, await send(c.server, api.POST('/v1/snippets', { body: body as never })), 'Created');
  },
};

export const snippetsUpdate: Command = {
  name: 'snippets update',
  usage: 'snp_ID [--name NAME] [--source FILE] [--display table|stat|json|logs|timeseries|none]',
  summary: 'change a snippet; widgets pinned to it see the change as drift',
  flags: ['name', 'source', 'display'],
  async run(ctx) {
    const id = idArg(ctx, 0, 'the snippet id', 'snp');
    noMoreArgs(ctx, 1);
    const body = await snippetFields(ctx);
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name, --source or --display');
    const { c, api } = workspaceClient(ctx);
    const current = await send(c.server, api.GET('/v1/snippets/{id}', { params: { path: { id } } }));
    printSnippet(ctx, await send(c.server, api.PATCH('/v1/snippets/{id}', { params: { path: { id }, header: { 'if-match': current.etag } }, body: body as never })), 'Updated');
  },
};

/** archive and unarchive: read the snippet's etag, then act under If-Match. */
function snippetAction(action: 'archive' | 'unarchive', summary: string): Command {
  return {
    name: `snippets ${action}`,
    usage: 'snp_ID',
    summary,
    async run(ctx) {
      const id = idArg(ctx, 0, 'the snippet id', 'snp');
      noMoreArgs(ctx, 1);
      const { c, api } = workspaceClient(ctx);
      const current = await send(c.server, api.GET('/v1/snippets/{id}', { params: { path: { id } } }));
      const params = { path: { id }, header: { 'if-match': current.etag } };
      const path = action === 'archive' ? '/v1/snippets/{id}:archive' : '/v1/snippets/{id}:unarchive';
      printSnippet(ctx, await send(c.server, api.POST(path, { params })), action === 'archive' ? 'Archived' : 'Unarchived');
    },
  };
}

export const SNIPPET_COMMANDS = [
  snippetsList,
  snippetsGet,
  snippetsCreate,
  snippetsUpdate,
  snippetAction('archive', 'archive a snippet: kept for the widgets that show it, offered to no new one'),
  snippetAction('unarchive', 'bring an archived snippet back'),
  deleteCommand({ name: 'snippets delete', summary: 'delete a snippet', noun: 'snippet', prefix: 'snp', path: '/v1/snippets/{id}', consequence: 'Widgets pinned to it show it as gone.' }),
];
