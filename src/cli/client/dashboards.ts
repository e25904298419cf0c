import { allPages, apiAs } from './api.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { printJson, printTable, time } from './output.js';

/** The spec's page size bound for revisions. */
const PAGE = 10;

export const dashboardsRevisions: Command = {
  name: 'dashboards revisions',
  usage: 'dash_ID',
  summary: "a dashboard's revisions, newest first",
  async run(ctx) {
    const id = idArg(ctx, 0, 'the dashboard id', 'dash');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiAs(c);
    const revisions = await allPages(c.server, (cursor) => api.GET('/v1/dashboards/{id}/revisions', { params: { path: { id }, query: { limit: PAGE, ...(cursor ? { cursor } : {}) } } }));
    if (ctx.json) return printJson(ctx.io, { data: revisions });
    printTable(
      ctx.io,
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
