import { apiAs, send } from './api.js';
import { confirm } from './confirm.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials } from './credentials.js';
import { printJson, time } from './output.js';

export const sessionsList: Command = {
  name: 'sessions list',
  usage: listUsage(100),
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  summary: 'your sessions: how and where each was issued, until when; * marks this login',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireCredentials(ctx.io.env);
    const api = apiAs(c);
    const sessions = await listed(ctx, c.server, 100, (query) => api.GET('/v1/sessions', { params: { query } }));
    printListed(
      ctx,
      sessions,
      [
        ['id', (x) => `${x.current ? '* ' : '  '}${x.id}`],
        ['issued by', (x) => x.issued_by],
        ['from', (x) => x.ip ?? ''],
        ['client', (x) => x.user_agent ?? ''],
        ['last used', (x) => time(x.last_used_at)],
        ['ends', (x) => time(x.expires_at)],
      ],
      'No sessions.',
    );
  },
};

export const sessionsRevoke: Command = {
  name: 'sessions revoke',
  usage: 'ses_ID',
  summary: 'end one of your sessions at once (a lost laptop, an old CI login)',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the session id', 'ses');
    noMoreArgs(ctx, 1);
    const c = requireCredentials(ctx.io.env);
    await confirm(ctx, `End session ${id}`, 'Whoever uses it is signed out.');
    await send(c.server, apiAs(c).DELETE('/v1/sessions/{id}', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, { id, revoked: true });
    ctx.io.out.write(`Revoked ${id}.\n`);
  },
};
