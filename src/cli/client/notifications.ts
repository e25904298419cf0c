import { apiAs, send } from './api.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { requireCredentials } from './credentials.js';
import { printJson, printTable, time } from './output.js';

export const notificationsList: Command = {
  name: 'notifications list',
  usage: `[--unread] ${listUsage(50)}`,
  summary: 'your notifications, newest first',
  flags: LIST_FLAGS,
  booleans: ['unread', ...LIST_BOOLEANS],
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireCredentials(ctx.io.env);
    const unread = ctx.args.flags.unread ? { unread: 'true' as const } : {};
    // Notifications are the user's own: no Service-Context.
    const api = apiAs({ ...c, workspace: null });
    const page = await listed(ctx, c.server, 50, (query) => api.GET('/v1/notifications', { params: { query: { ...query, ...unread } } }));
    printListed(
      ctx,
      page,
      [
        ['id', (n) => n.id],
        ['', (n) => (n.read_at === null ? '•' : '')],
        ['severity', (n) => n.severity],
        ['created', (n) => time(n.created_at)],
        ['title', (n) => n.title],
      ],
      ctx.args.flags.unread ? 'No unread notifications.' : 'No notifications.',
    );
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
