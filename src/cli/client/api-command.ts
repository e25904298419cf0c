import { transport } from '@workspace-platform/sdk';
import { UsageError, stringFlag } from '../args.js';
import { apiFailure, unreachable } from './api.js';
import { arg, noMoreArgs, type Command, type CommandContext } from './command.js';
import { requireCredentials } from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { readJsonObject, readText } from './input.js';
import { packageVersion } from '../../shared/package-root.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

/** `-F key=value`: JSON's own literals and numbers, `@file` for a file's text, else the string. */
function typedValue(ctx: CommandContext, raw: string): unknown {
  if (raw.startsWith('@')) return readText(ctx.io, raw.slice(1));
  if (/^(true|false|null)$/.test(raw) || /^-?\d+(\.\d+)?$/.test(raw) || /^[[{]/.test(raw)) {
    try {
      return JSON.parse(raw);
    } catch {
      throw new UsageError(`-F ${raw} is not JSON; use -f for a plain string`);
    }
  }
  return raw;
}

async function fieldsOf(ctx: CommandContext): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const split = (flag: string, pair: string) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new UsageError(`${flag} takes key=value, got "${pair}"`);
    return [pair.slice(0, at), pair.slice(at + 1)] as const;
  };
  for (const pair of ctx.args.lists?.['raw-field'] ?? []) {
    const [k, v] = split('-f', pair);
    out[k] = v;
  }
  for (const pair of ctx.args.lists?.field ?? []) {
    const [k, v] = split('-F', pair);
    out[k] = await typedValue(ctx, v);
  }
  return out;
}

function headersOf(ctx: CommandContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of ctx.args.lists?.header ?? []) {
    const at = h.indexOf(':');
    if (at < 1) throw new UsageError(`-H takes "Name: value", got "${h}"`);
    out[h.slice(0, at).trim().toLowerCase()] = h.slice(at + 1).trim();
  }
  return out;
}

/** `secrets`, `/secrets`, `v1/secrets` and `/v1/secrets?limit=5` all name `/v1/secrets...`; `/healthz` and the like stay as they are. */
function pathOf(raw: string): string {
  const p = raw.startsWith('/') ? raw : `/${raw}`;
  return /^\/(v1\/|v1$|healthz|readyz|metrics|license|\.well-known\/)/.test(p) ? p : `/v1${p}`;
}

/**
 * `wsp api`: any operation of the API with the CLI's credentials, as `gh api` does: fields
 * become the query of a GET or DELETE and the JSON body of a write; the answer is printed as
 * it came; an error answer exits 1 (its envelope still printed on stdout).
 */
export const apiCommand: Command = {
  name: 'api',
  usage: 'METHOD PATH [-f key=value]... [-F key=json]... [--input FILE] [-H "Name: value"]... [--paginate]',
  summary: 'call any operation of the API with your login, and print its answer',
  lists: ['raw-field', 'field', 'header'],
  flags: ['input'],
  booleans: ['paginate'],
  shorts: { 'raw-field': 'f', field: 'F', header: 'H' },
  details: `PATH is relative to /v1 unless it starts with it (secrets, /v1/secrets/sec_1/versions).
-f key=value adds a string field, -F key=value a typed one (true, 42, null, [..], {..}, @file for a file's text).
Fields are the query string of GET and DELETE and the JSON body of POST, PUT and PATCH; --input FILE ("-": stdin) sends a whole JSON body instead.
--paginate follows next_cursor and prints every item of a list as one {data} document.
POST gets an Idempotency-Key unless -H gives one; the answer is printed as it came, and an error answer exits 1.`,
  async run(ctx) {
    const method = arg(ctx, 0, 'the method (GET, POST, PUT, PATCH, DELETE)').toUpperCase() as Method;
    if (!METHODS.includes(method)) throw new UsageError(`the method is one of ${METHODS.join(', ')}, got "${ctx.args.positionals[0]}"`);
    const path = pathOf(arg(ctx, 1, 'the path (such as /v1/secrets)'));
    noMoreArgs(ctx, 2);
    const fields = await fieldsOf(ctx);
    const input = stringFlag(ctx.args, 'input');
    const writes = method === 'POST' || method === 'PUT' || method === 'PATCH';
    if (input !== undefined && Object.keys(fields).length) throw new UsageError('give fields (-f, -F) or --input, not both');
    if (input !== undefined && !writes) throw new UsageError(`--input is a body, and ${method} sends none`);
    const paginate = ctx.args.flags.paginate === true;
    if (paginate && method !== 'GET') throw new UsageError('--paginate follows the pages of a GET');
    const body = input !== undefined ? await readJsonObject(ctx.io, 'input', input) : writes ? fields : undefined;

    const c = requireCredentials(ctx.io.env);
    const url = new URL(c.server.replace(/\/+$/, '') + path);
    if (!writes) for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    const headers: Record<string, string> = {
      authorization: `Bearer ${c.token}`,
      'user-agent': `wsp-cli/${packageVersion()}`,
      ...(c.workspace ? { 'service-context': c.workspace } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headersOf(ctx),
    };
    const send = transport({ fetch: (r) => fetch(r, { signal: AbortSignal.timeout(30_000) }) });
    const call = async (target: URL) => {
      let res: Response;
      try {
        res = await send(new Request(target, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }));
      } catch (err) {
        throw unreachable(c.server, err);
      }
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = undefined;
      }
      return { res, text, json };
    };

    let answer = await call(url);
    if (paginate && answer.res.ok) {
      const items: unknown[] = [];
      for (;;) {
        const page = answer.json as { data?: unknown[]; next_cursor?: string | null } | null;
        if (!page || !Array.isArray(page.data)) throw new CliError(`${path} does not answer a list; --paginate needs one`, EXIT.USAGE);
        items.push(...page.data);
        if (!page.next_cursor) break;
        url.searchParams.set('cursor', page.next_cursor);
        answer = await call(url);
        if (!answer.res.ok) break;
      }
      if (answer.res.ok) answer = { ...answer, json: { data: items, has_more: false, next_cursor: null } };
    }
    const { res, text, json } = answer;
    if (json !== undefined && json !== null) ctx.io.out.write(`${ctx.io.out.isTTY ? JSON.stringify(json, null, 2) : JSON.stringify(json)}\n`);
    else if (text) ctx.io.out.write(text.endsWith('\n') ? text : `${text}\n`);
    if (res.ok) return;
    throw apiFailure(res.status, json);
  },
};
