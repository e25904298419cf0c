import { UsageError, stringFlag } from '../args.js';
import { apiAs, send } from './api.js';
import { confirm } from './confirm.js';
import { durationFlag } from './durations.js';
import { listed, LIST_BOOLEANS, LIST_FLAGS, listUsage, printListed } from './lists.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { requireCredentials, requireWorkspace } from './credentials.js';
import { printFields, printJson, time } from './output.js';
import { TOKEN_SCOPES, type TokenScope } from '../../auth/scope-schemas.js';

/** `--expires-in 30d`: a duration with its unit, from now (at most ten years). */
const expiresAt = (raw: string, now: number) => now + durationFlag('expires-in', raw, { min: 60, max: 3650 * 86400 });

/** `--scopes a,b` (an empty value: no scope at all); unknown ones are a usage error naming the known. */
function scopesFlag(raw: string | undefined): TokenScope[] | undefined {
  if (raw === undefined) return undefined;
  const scopes = raw
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  const unknown = scopes.filter((x) => !(TOKEN_SCOPES as readonly string[]).includes(x));
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}; the scopes are ${TOKEN_SCOPES.join(', ')}`);
  return [...new Set(scopes)] as TokenScope[];
}

export const tokensCreate: Command = {
  name: 'tokens create',
  usage: '--name NAME [--expires-in 30d] [--scopes secrets:read,installs:write]',
  summary: 'create a workspace API token (owner or admin); it is shown once',
  flags: ['name', 'expires-in', 'scopes'],
  details: `--scopes limits what the token may do, comma-separated (none given: everything):
${TOKEN_SCOPES.join(', ')}.
A :write scope implies the :read of its area; secrets:access (reading payloads) is never implied.`,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const name = stringFlag(ctx.args, 'name', true);
    const expiresIn = stringFlag(ctx.args, 'expires-in');
    const scopes = scopesFlag(stringFlag(ctx.args, 'scopes'));
    const body = { name, ...(expiresIn ? { expires_at: expiresAt(expiresIn, Math.floor(Date.now() / 1000)) } : {}), ...(scopes ? { scopes } : {}) };
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const token = await send(c.server, apiAs(c).POST('/v1/api_tokens', { body }));
    if (ctx.json) return printJson(ctx.io, token);
    printFields(ctx.io, [
      ['id', token.id],
      ['name', token.name],
      ['expires', token.expires_at === null ? 'never' : time(token.expires_at)],
      ['token', token.token],
    ]);
    ctx.io.err.write('Store the token now: it is never shown again.\n');
  },
};

export const tokensList: Command = {
  name: 'tokens list',
  usage: listUsage(100),
  summary: "the workspace's API tokens (never their secrets)",
  flags: LIST_FLAGS,
  booleans: LIST_BOOLEANS,
  async run(ctx) {
    noMoreArgs(ctx, 0);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    const api = apiAs(c);
    const tokens = await listed(ctx, c.server, 100, (query) => api.GET('/v1/api_tokens', { params: { query } }));
    printListed(
      ctx,
      tokens,
      [
        ['id', (t) => t.id],
        ['name', (t) => t.name],
        ['prefix', (t) => t.prefix],
        ['created', (t) => time(t.created_at)],
        ['expires', (t) => (t.expires_at === null ? 'never' : time(t.expires_at))],
        ['last used', (t) => time(t.last_used_at)],
        ['scopes', (t) => (t.scopes.length === TOKEN_SCOPES.length ? 'all' : t.scopes.join(' ') || 'none')],
      ],
      'No API tokens.',
    );
  },
};

export const tokensRevoke: Command = {
  name: 'tokens revoke',
  usage: 'tok_ID',
  summary: 'revoke an API token at once (owner or admin)',
  async run(ctx) {
    const id = idArg(ctx, 0, 'the token id', 'tok');
    noMoreArgs(ctx, 1);
    const c = requireWorkspace(requireCredentials(ctx.io.env));
    await confirm(ctx, `Revoke API token ${id}`, 'Whatever uses it stops working at once.');
    await send(c.server, apiAs(c).DELETE('/v1/api_tokens/{id}', { params: { path: { id } } }));
    if (ctx.json) return printJson(ctx.io, { id, revoked: true });
    ctx.io.out.write(`Revoked ${id}.\n`);
  },
};
