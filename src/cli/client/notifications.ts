import { apiAs, send } from './api.js';
import { idArg, intFlag, noMoreArgs, type Command } from './command.js';
import { requireCredentials } from './credentials.js';
import { printJson, printTable, time } from './output.js';

export const notificationsList: Command = {
  name: 'notifications list',
  usage: '[--unread] [--limit N]',
  summary: 'your notifications, newest first',
  flags: ['limit'],
  booleans: ['unread'],
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const limit = intFlag(ctx, 'limit', 1, 50);
    const c = requireCredentials(ctx.io.env);
    const query = { ...(ctx.args.flags.unread ? { unread: 'true' as const } : {}), ...(limit ? { limit } : {}) };
    // Notifications are the user's own: no Service-Context.
    const page = await send(c.server, apiAs({ ...c, workspace: null }).GET('/v1/notifications', { params: { query } }));
    if (ctx.json) return printJson(ctx.io, page);
    printTable(
      ctx.io,
      page.data,
      [
        ['id', (n) => n.id],
        ['', (n) => (n.read_at === null ? '•' : '')],
        ['severity', (n) => n.severity],
        ['created', (n) => time(n.created_at)],
        ['title', (n) => n.title],
      ],
      ctx.args.flags.unread ? 'No unread notifications.' : 'No notifications.',
    );
    if (page.has_more) ctx.io.err.write('More notifications exist: use --json with the API cursor, or read some first.\n');
  },
};

export const notificationsRead: Command = {
  name: 'notifications read',
  usage: 'ntf_ID',
  summary: 'mark a notification read',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the notification id', 'ntf');
    noMoreArgs(ctx, 1);
    const c = requireCredentials(ctx.io.env);
    await send(c.server, apiAs({ ...c, workspace: null }).PATCH('/v1/notifications/{id}/read', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, { id, read: true });
    ctx.io.out.write(`Marked ${id} read.\n`);
  },
};
