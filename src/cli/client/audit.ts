import { stringFlag } from '../args.js';
import { apiAs, send } from './api.js';
import { intFlag, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { printJson, printTable, time } from './output.js';

export const auditList: Command = {
  name: 'audit list',
  usage: '[--type secret.*] [--actor usr_ID] [--resource ID] [--limit 50]',
  summary: "the workspace's audit log, newest first (owner or admin, or a token with audit:read)",
  flags: ['type', 'actor', 'resource', 'limit'],
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const type = stringFlag(ctx.args, 'type');
    const actor = stringFlag(ctx.args, 'actor');
    const resource = stringFlag(ctx.args, 'resource');
    const query = { limit: intFlag(ctx, 'limit', 1, 100) ?? 50, ...(type ? { type: type as never } : {}), ...(actor ? { actor_id: actor } : {}), ...(resource ? { resource_id: resource } : {}) };
    const page = await send(c.server, apiAs(c).GET('/v1/audit_events', { params: { query } }));
    if (ctx.json) return printJson(ctx.io, page);
    printTable(
      ctx.io,
      page.data,
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
