import { apiFor, send } from './api.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials } from './credentials.js';
import { printJson, printTable, time } from './output.js';
import { requireWorkspace } from './tokens.js';

interface Revision {
  id: string;
  dashboard_id: string;
  parent_revision_id: string | null;
  restored_from_revision_id: string | null;
  source: 'manual' | 'automatic' | 'restore' | 'reset' | 'backfill';
  author_id: string;
  summary: string | null;
  name: string;
  created_at: number;
}

/**
 * The spec's GET /v1/dashboards/{id}/revisions (a list envelope, 1-10 a page), typed here
 * until the dashboards routes are in the generated SDK; then `apiAs` and `paths` replace it.
 */
interface RevisionPaths {
  '/v1/dashboards/{id}/revisions': {
    get: {
      parameters: { path: { id: string }; query?: { limit?: number; cursor?: string } };
      responses: {
        200: { content: { 'application/json': { data: Revision[]; has_more: boolean; next_cursor: string | null } } };
        default: { content: { 'application/json': unknown } };
      };
    };
  };
}

export const dashboardsRevisions: Command = {
  name: 'dashboards revisions',
  usage: 'dash_ID',
  summary: "a dashboard's revisions, newest first",
  async run(ctx) {
    const id = idArg(ctx, 0, 'the dashboard id', 'dash');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiFor<RevisionPaths>(c.server, c.token, c.workspace);
    const revisions: Revision[] = [];
    let cursor: string | undefined;
    do {
      const page = await send(c.server, api.GET('/v1/dashboards/{id}/revisions', { params: { path: { id }, query: { limit: 10, ...(cursor ? { cursor } : {}) } } }));
      revisions.push(...page.data);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
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
