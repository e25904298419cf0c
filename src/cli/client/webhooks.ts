import { UsageError, stringFlag } from '../args.js';
import { apiAs, send } from './api.js';
import { deleteCommand } from './deletes.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { idArg, noMoreArgs, type Command, type CommandContext } from './command.js';
import type { Schemas, Webhook } from '@workspace-platform/sdk';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { printFields, printJson, time } from './output.js';

const managed = (env: NodeJS.ProcessEnv) => requireWorkspace(requireCredentials(env));

/** `--events a,b.*`: the event types an endpoint takes; the server names the known ones when one is not. */
function eventsFlag(raw: string): string[] {
  const types = [
    ...new Set(
      raw
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    ),
  ];
  if (types.length === 0) throw new UsageError('--events needs at least one event type, e.g. install.*,secret_version.accessed');
  return types;
}

export const webhooksCreate: Command = {
  name: 'webhooks create',
  usage: '--url https://... --events install.*,secret.created [--description TEXT]',
  summary: 'add a webhook endpoint (owner or admin); its signing secret is shown once',
  flags: ['url', 'events', 'description'],
  details: 'Deliveries are signed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature); docs/events.md has a receiver.',
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = managed(ctx.io.env);
    const description = stringFlag(ctx.args, 'description');
    // The types are checked by the server, whose refusal lists the known ones.
    const body = { url: stringFlag(ctx.args, 'url', true), event_types: eventsFlag(stringFlag(ctx.args, 'events', true)) as never[], ...(description !== undefined ? { description } : {}) };
    const made = await send(c.server, apiAs(c).POST('/v1/webhooks', { body }));
    if (ctx.json) return printJson(ctx.io, made);
    printFields(ctx.io, [
      ['id', made.id],
      ['url', made.url],
      ['events', made.event_types.join(', ')],
      ['secret', made.secret],
    ]);
    ctx.io.err.write('Store the secret now: it is never shown again.\n');
  },
};

export const webhooksList: Command = {
  name: 'webhooks list',
  usage: listUsage(100),
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  summary: "the workspace's webhook endpoints",
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = managed(ctx.io.env);
    const api = apiAs(c);
    const hooks = await listed(ctx, c.server, 100, (query) => api.GET('/v1/webhooks', { params: { query } }));
    printListed(
      ctx,
      hooks,
      [
        ['id', (w) => w.id],
        ['url', (w) => w.url],
        ['events', (w) => w.event_types.join(',')],
        ['state', (w) => (w.state === 'disabled' ? `disabled (${w.disabled_reason ?? ''})` : w.state)],
        ['created', (w) => time(w.created_at)],
      ],
      'No webhooks.',
    );
  },
};

export const webhooksDelete = deleteCommand({
  name: 'webhooks delete',
  summary: 'delete a webhook endpoint and its deliveries',
  noun: 'webhook',
  prefix: 'wh',
  path: '/v1/webhooks/{id}',
  consequence: 'Its deliveries go with it.',
});

export const webhooksTest: Command = {
  name: 'webhooks test',
  usage: 'wh_ID',
  summary: 'send a webhook.tested event to the endpoint',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the webhook id', 'wh');
    noMoreArgs(ctx, 1);
    const c = managed(ctx.io.env);
    const d = await send(c.server, apiAs(c).POST('/v1/webhooks/{id}:test', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, d);
    ctx.io.out.write(`Queued ${d.id} (${d.event_type}); \`wsp webhooks deliveries ${id}\` shows how it went.\n`);
  },
};

export const webhooksDeliveries: Command = {
  name: 'webhooks deliveries',
  usage: `wh_ID ${listUsage(100)}`,
  summary: "an endpoint's deliveries, newest first: state, attempts, last answer",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    const id = idArg(ctx, 0, 'the webhook id', 'wh');
    noMoreArgs(ctx, 1);
    const c = managed(ctx.io.env);
    const api = apiAs(c);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id }, query } }));
    printListed(
      ctx,
      page,
      [
        ['id', (d) => d.id],
        ['event', (d) => d.event_type],
        ['state', (d) => d.state],
        ['attempts', (d) => d.attempts],
        ['last', (d) => (d.last_status === null ? (d.last_error ?? '') : String(d.last_status))],
        ['next attempt', (d) => (d.state === 'pending' ? time(d.next_attempt_at) : '')],
      ],
      'No deliveries yet.',
    );
  },
};

type Attempt = Schemas['WebhookDeliveryAttempt'];

/** What an attempt came to, in a table cell: the status (and the start of the answer), or the error. */
const outcomeOf = (a: Attempt) => (a.response ? `${a.response.status}${a.response.body.trim() ? ` ${a.response.body.replace(/\s+/g, ' ').trim()}` : ''}` : (a.error ?? ''));

/** One attempt in full: the request (headers and body) and the response (status, headers, body), as kept. */
function printAttempt(ctx: CommandContext, a: Attempt): void {
  const w = (line: string) => ctx.io.out.write(`${line}\n`);
  w(`Attempt ${a.number}, ${time(a.started_at)}, ${a.duration_ms} ms${a.error ? `: ${a.error}` : ''}`);
  w(`> ${a.request.method} ${a.request.url}`);
  for (const x of a.request.headers) w(`> ${x.name}: ${x.value}`);
  w('>');
  w(a.request.body === null ? '(body withheld: reading it needs audit:read as well)' : a.request.body + (a.request.body_truncated ? '\n(body cut: only its first 16 KiB are shown)' : ''));
  if (!a.response) {
    w('< no HTTP answer');
  } else {
    w(`< ${a.response.status}`);
    for (const x of a.response.headers) w(`< ${x.name}: ${x.value}`);
    if (a.response.headers_truncated) w('< (more headers, or longer values, not kept)');
    w('<');
    if (a.response.body !== '') w(a.response.body);
    if (a.response.body_truncated) w('(answer cut: only its first 4 KiB are kept)');
  }
  w('');
}

export const webhooksAttempts: Command = {
  name: 'webhooks attempts',
  usage: `wh_ID whd_ID [--details] ${listUsage(100)}`,
  summary: "a delivery's attempts, oldest first: when, how long, the answer or the error; --details shows each request and response",
  flags: LIST_FLAGS,
  booleans: [...LIST_BOOLEANS, 'details'],
  async run(ctx) {
    const id = idArg(ctx, 0, 'the webhook id', 'wh');
    const did = idArg(ctx, 1, 'the delivery id', 'whd');
    noMoreArgs(ctx, 2);
    const c = managed(ctx.io.env);
    const api = apiAs(c);
    const page = await listed(ctx, c.server, 100, (query) => api.GET('/v1/webhooks/{id}/deliveries/{did}/attempts', { params: { path: { id, did }, query } }));
    if (ctx.json || ctx.args.flags.details !== true) {
      printListed(
        ctx,
        page,
        [
          ['#', (a) => a.number],
          ['started', (a) => time(a.started_at)],
          ['took', (a) => `${a.duration_ms} ms`],
          ['answer', outcomeOf],
        ],
        'No attempts yet.',
      );
      return;
    }
    if (page.data.length === 0) ctx.io.out.write('No attempts yet.\n');
    for (const a of page.data) printAttempt(ctx, a);
    if (page.has_more) ctx.io.err.write(`Showing the first ${page.data.length}: add --all for every one, or a larger --limit.\n`);
  },
};

export const webhooksRetry: Command = {
  name: 'webhooks retry',
  usage: 'wh_ID whd_ID',
  summary: 'send a delivery again now',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the webhook id', 'wh');
    const did = idArg(ctx, 1, 'the delivery id', 'whd');
    noMoreArgs(ctx, 2);
    const c = managed(ctx.io.env);
    const d = await send(c.server, apiAs(c).POST('/v1/webhooks/{id}/deliveries/{did}:retry', { params: { path: { id, did } } }));
    if (ctx.json) return printJson(ctx.io, d);
    ctx.io.out.write(`Queued ${d.id} again.\n`);
  },
};

export const webhooksGet: Command = {
  name: 'webhooks get',
  usage: 'wh_ID',
  summary: 'one webhook endpoint: its URL, events and state (never its secret)',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the webhook id', 'wh');
    noMoreArgs(ctx, 1);
    const c = managed(ctx.io.env);
    printWebhook(ctx, await send(c.server, apiAs(c).GET('/v1/webhooks/{id}', { params: { path: { id } } })));
  },
};

export const webhooksUpdate: Command = {
  name: 'webhooks update',
  usage: 'wh_ID [--url https://...] [--events a.*,b] [--description TEXT] [--enable | --disable]',
  summary: 'change an endpoint; --enable brings back one disabled after failing deliveries',
  flags: ['url', 'events', 'description'],
  booleans: ['enable', 'disable'],
  async run(ctx) {
    const id = idArg(ctx, 0, 'the webhook id', 'wh');
    noMoreArgs(ctx, 1);
    const { flags } = ctx.args;
    if (flags.enable && flags.disable) throw new UsageError('--enable and --disable contradict each other');
    const body = {
      ...(typeof flags.url === 'string' ? { url: flags.url } : {}),
      ...(typeof flags.events === 'string' ? { event_types: eventsFlag(flags.events) as never[] } : {}),
      ...(typeof flags.description === 'string' ? { description: flags.description } : {}),
      ...(flags.enable || flags.disable ? { enabled: flags.enable === true } : {}),
    };
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --url, --events, --description, --enable or --disable');
    const c = managed(ctx.io.env);
    const api = apiAs(c);
    const current = await send(c.server, api.GET('/v1/webhooks/{id}', { params: { path: { id } } }));
    printWebhook(ctx, await send(c.server, api.PATCH('/v1/webhooks/{id}', { params: { path: { id }, header: { 'if-match': current.etag } }, body })));
  },
};

function printWebhook(ctx: CommandContext, w: Webhook): void {
  if (ctx.json) return printJson(ctx.io, w);
  printFields(ctx.io, [
    ['id', w.id],
    ['url', w.url],
    ['events', w.event_types.join(', ')],
    ['state', w.state],
    ['disabled because', w.disabled_reason],
    ['description', w.description],
    ['updated', time(w.updated_at)],
  ]);
}

export const WEBHOOK_COMMANDS = [webhooksCreate, webhooksList, webhooksGet, webhooksUpdate, webhooksDelete, webhooksTest, webhooksDeliveries, webhooksAttempts, webhooksRetry];
