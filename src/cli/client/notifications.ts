import { apiAs, apiFailure, send } from './api.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { requireCredentials } from './credentials.js';
import { printJson, time } from './output.js';

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

/**
 * The API answers 204 for any well-formed id (docs/spec-gaps.md: nothing leaks about others'), so the CLI
 * looks for the notification among the user's own first: one that is not there is reported as
 * the 404 it is for this user, and one already read is said to be, rather than "marked read".
 */
async function findOwn(api: ReturnType<typeof apiAs>, server: string, id: string) {
  const wanted = id.toLowerCase().startsWith('ntf_') ? id.toLowerCase() : `ntf_${id.toLowerCase()}`;
  let cursor: string | undefined;
  do {
    const page = await send(server, api.GET('/v1/notifications', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } }));
    const found = page.data.find((n) => n.id.toLowerCase() === wanted);
    if (found) return found;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return undefined;
}

export const notificationsRead: Command = {
  name: 'notifications read',
  usage: 'ntf_ID',
  summary: 'mark one of your notifications read',
  details: 'An id that is not one of your notifications is an error (exit 1, 404), not a silent success.',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the notification id', 'ntf');
    noMoreArgs(ctx, 1);
    const c = requireCredentials(ctx.io.env);
    const api = apiAs({ ...c, workspace: null });
    const own = await findOwn(api, c.server, id);
    if (!own) throw apiFailure(404, { errors: [{ code: 7002, message: `You have no notification ${id}` }] });
    if (own.read_at === null) await send(c.server, api.PATCH('/v1/notifications/{id}/read', { params: { path: { id: own.id } } }));
    if (ctx.json) return printJson(ctx.io, { id: own.id, read: true, was_read: own.read_at !== null });
    ctx.io.out.write(own.read_at === null ? `Marked ${own.id} read.\n` : `${own.id} was already read.\n`);
  },
};
