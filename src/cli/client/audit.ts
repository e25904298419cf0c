import { stringFlag } from '../args.js';
import { apiAs } from './api.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { noMoreArgs, type Command, type CommandContext } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { timeOption } from './durations.js';
import { time } from './output.js';
import type { paths, Schemas } from '@workspace-platform/sdk';

// The server checks the type against its list (422 naming every type); the CLI passes it on.
type WorkspaceTypeFilter = NonNullable<NonNullable<paths['/v1/audit_events']['get']['parameters']['query']>['type']>;
type AccountTypeFilter = NonNullable<NonNullable<paths['/v1/me/events']['get']['parameters']['query']>['type']>;

/** `--from` and `--to` as the API's `since` and `until`. */
function period(ctx: CommandContext): { since?: number; until?: number } {
  const now = Math.floor(Date.now() / 1000);
  const since = timeOption(ctx.args.flags, 'from', now);
  const until = timeOption(ctx.args.flags, 'to', now);
  return { ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}) };
}

const COLUMNS: [string, (e: Schemas['AuditEvent']) => string | null][] = [
  ['time', (e) => time(e.created_at)],
  ['type', (e) => e.type],
  ['actor', (e) => e.actor.id ?? e.actor.kind],
  ['resource', (e) => e.resource.id],
  ['ip', (e) => e.ip],
];

export const auditList: Command = {
  name: 'audit list',
  usage: `[--type secret.*] [--actor usr_ID] [--resource ID] [--from 7d] [--to TIME] ${listUsage(100)}`,
  summary: "the workspace's audit log, newest first (owner or admin, or a token with audit:read)",
  details: '--from and --to take Unix seconds, an ISO 8601 date or time, or a duration ago (7d). Sign-ins are in `wsp audit mine`, not here: they belong to no workspace.',
  flags: ['type', 'actor', 'resource', 'from', 'to', ...LIST_FLAGS],
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const type = stringFlag(ctx.args, 'type');
    const actor = stringFlag(ctx.args, 'actor');
    const resource = stringFlag(ctx.args, 'resource');
    const filters = { ...(type ? { type: type as WorkspaceTypeFilter } : {}), ...(actor ? { actor_id: actor } : {}), ...(resource ? { resource_id: resource } : {}), ...period(ctx) };
    const api = apiAs(c);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/audit_events', { params: { query: { ...query, ...filters } } }));
    printListed(ctx, page, COLUMNS, 'No events.');
  },
};

export const auditMine: Command = {
  name: 'audit mine',
  usage: `[--type session.*] [--from 7d] [--to TIME] ${listUsage(100)}`,
  summary: 'your own security log, newest first: sign-ins (also failed ones), sessions ended, device approvals',
  details: '--from and --to take Unix seconds, an ISO 8601 date or time, or a duration ago (7d). A workspace API token has no person: it is refused.',
  flags: ['type', 'from', 'to', ...LIST_FLAGS],
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireCredentials(ctx.io.env);
    const type = stringFlag(ctx.args, 'type');
    const filters = { ...(type ? { type: type as AccountTypeFilter } : {}), ...period(ctx) };
    const api = apiAs(c);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/me/events', { params: { query: { ...query, ...filters } } }));
    printListed(ctx, page, COLUMNS, 'No events.');
  },
};
