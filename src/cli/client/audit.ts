import { stringFlag } from '../args.js';
import { apiAs } from './api.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { time } from './output.js';

export const auditList: Command = {
  name: 'audit list',
  usage: `[--type secret.*] [--actor usr_ID] [--resource ID] ${listUsage(100)}`,
  summary: "the workspace's audit log, newest first (owner or admin, or a token with audit:read)",
  flags: ['type', 'actor', 'resource', ...LIST_FLAGS],
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const type = stringFlag(ctx.args, 'type');
    const actor = stringFlag(ctx.args, 'actor');
    const resource = stringFlag(ctx.args, 'resource');
    const filters = { ...(type ? { type: type as never } : {}), ...(actor ? { actor_id: actor } : {}), ...(resource ? { resource_id: resource } : {}) };
    const api = apiAs(c);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/audit_events', { params: { query: { ...query, ...filters } } }));
    printListed(
      ctx,
      page,
      [
        ['time', (e) => time(e.created_at)],
        ['type', (e) => e.type],
        ['actor', (e) => (e.actor.id ?? e.actor.kind)],
        ['resource', (e) => e.resource.id],
        ['ip', (e) => e.ip],
      ],
      'No events.',
    );
  },
};
