import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { PATTERN_WORDS } from '../../src/http/schemas.js';
import { dereferenced } from '../helpers/openapi-deref.js';

/**
 * docs/spec-gaps.md, "Lifecycles": validation messages name what is allowed in words or lists, never a regular
 * expression. Walks every operation of the OpenAPI document: each value its request schema
 * constrains by a pattern, an enum or a discriminator is sent wrong, on its own, and the
 * message at its path must say what is allowed without showing a regular expression.
 */
type Schema = Record<string, any>;
interface Target {
  method: string;
  url: string;
  part: 'body' | 'query' | 'headers' | 'path';
  path: string[];
  kind: 'pattern' | 'enum' | 'discriminator';
  schema: Schema;
  /** What is sent: the query, headers, path value or body carrying the one wrong value. */
  value: unknown;
  /** Allowed values the message must list (enum, discriminator). */
  allowed?: unknown[];
}

let doc: { paths: Record<string, Record<string, Schema>> };
const h = useTestApp({
  setup: async () => {
    doc = dereferenced((await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json());
  },
});
const s = h.seeded;

/** Looks like a regular expression: anchors, escapes of classes, groups, quantifiers on sets or counts. */
const REGEX_LIKE = /\^\[|\^\(|\$$|\\[dDsSwWbBuU]|\(\?[:=!<]|\{\d+(,\d*)?\}|\][+*?]|\)[+*?]/;

/** A value the pattern refuses that the string's length bounds accept. */
function badFor(schema: Schema, forHeader: boolean): string | null {
  const re = new RegExp(schema.pattern, 'u');
  const candidates = ['!', ' x ', 'a b', '..', '-x', 'x'.repeat(Math.max(1, schema.minLength ?? 1)), '\u0001', 'Ü'];
  for (const c of candidates) {
    if (forHeader && /[^\x20-\x7e]/.test(c)) continue;
    if (c.length < (schema.minLength ?? 0) || c.length > (schema.maxLength ?? Infinity)) continue;
    if (!re.test(c)) return c;
  }
  return null;
}

/** Every constrained value inside a body schema, with a body holding only it (and the tags of the unions around it). */
function bodyTargets(schema: Schema, path: string[], wrap: (v: unknown) => unknown, out: Omit<Target, 'method' | 'url' | 'part'>[], depth = 0): void {
  if (!schema || depth > 12) return;
  const tag = Array.isArray(schema.oneOf) ? (schema.discriminator?.propertyName ?? tagOf(schema.oneOf)) : null;
  if (tag) {
    const kinds = schema.oneOf.map((b: Schema) => b.properties?.[tag]?.const ?? b.properties?.[tag]?.enum?.[0]);
    out.push({ path: [...path, tag], kind: 'discriminator', schema, value: wrap({ [tag]: 'no-such-kind' }), allowed: kinds });
    for (const [i, branch] of (schema.oneOf as Schema[]).entries()) {
      objectTargets(branch, path, (v) => wrap({ ...(v as object), [tag]: kinds[i] }), out, depth, tag);
    }
    return;
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) for (const branch of schema[key] as Schema[]) bodyTargets(branch, path, wrap, out, depth + 1);
  }
  const types = ([] as string[]).concat(schema.type ?? []);
  if (Array.isArray(schema.enum) && schema.enum.some((v: unknown) => typeof v === 'string')) {
    out.push({ path, kind: 'enum', schema, value: wrap('no-such-value'), allowed: schema.enum.filter((v: unknown) => v !== null) });
  }
  if (typeof schema.pattern === 'string') {
    const bad = badFor(schema, false);
    assert.ok(bad !== null, `no value found that ${path.join('.')}'s pattern refuses`);
    out.push({ path, kind: 'pattern', schema, value: wrap(bad) });
  }
  if (types.includes('array') && schema.items) bodyTargets(schema.items, [...path, '0'], (v) => wrap([v]), out, depth + 1);
  if (types.includes('object') || schema.properties) objectTargets(schema, path, wrap, out, depth);
}

/** The property every branch fixes to one value (the document drops `discriminator`: its mapping needs components). */
function tagOf(branches: Schema[]): string | null {
  const first = branches[0]?.properties ?? {};
  const fixed = (b: Schema, k: string) => b.properties?.[k]?.const !== undefined || b.properties?.[k]?.enum?.length === 1;
  return Object.keys(first).find((k) => branches.every((b) => fixed(b, k))) ?? null;
}

function objectTargets(schema: Schema, path: string[], wrap: (v: unknown) => unknown, out: Omit<Target, 'method' | 'url' | 'part'>[], depth: number, tag?: string): void {
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    if (name === tag) continue;
    bodyTargets(prop, [...path, name], (v) => wrap({ [name]: v }), out, depth + 1);
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    bodyTargets(schema.additionalProperties, [...path, 'k'], (v) => wrap({ k: v }), out, depth + 1);
  }
}

function targets(): Target[] {
  const out: Target[] = [];
  for (const [template, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params = (op.parameters ?? []) as { in: string; name: string; schema: Schema }[];
      const pathValue = (name: string, value: string) => template.replace(`{${name}}`, encodeURIComponent(value)).replace(/\{[^}]+\}/g, 'x1');
      for (const p of params) {
        const part = p.in === 'header' ? 'headers' : p.in === 'query' ? 'query' : p.in === 'path' ? 'path' : null;
        // Fastify checks the path, then the body, then the query and headers, and reports the
        // first part that fails: query and headers are sent wrong where no body comes first (the
        // same header schemas, Service-Context's among them, are on every route).
        if (!part || (op.requestBody && part !== 'path')) continue;
        if (part === 'headers' && params.some((q) => q.in === 'query' && (q as { required?: boolean }).required)) continue;
        const leaf: Schema = p.schema;
        const bad = typeof leaf.pattern === 'string' ? badFor(leaf, part === 'headers') : null;
        const found: { kind: Target['kind']; value: string; allowed?: unknown[] }[] = [];
        if (bad !== null) found.push({ kind: 'pattern', value: bad });
        if (Array.isArray(leaf.enum)) found.push({ kind: 'enum', value: 'no-such-value', allowed: leaf.enum });
        for (const f of found) {
          const url = part === 'path' ? pathValue(p.name, f.value) : pathValue('', '');
          out.push({
            method,
            url: part === 'query' ? `${url}?${p.name}=${encodeURIComponent(f.value)}` : url,
            part,
            path: [p.name],
            kind: f.kind,
            schema: leaf,
            value: f.value,
            ...(f.allowed ? { allowed: f.allowed } : {}),
          });
        }
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) {
        const found: Omit<Target, 'method' | 'url' | 'part'>[] = [];
        bodyTargets(body, [], (v) => v, found);
        for (const f of found) out.push({ ...f, method, url: pathValue('', ''), part: 'body' });
      }
    }
  }
  return out;
}

test('every pattern of the document has its words, and no description or words show a regular expression', () => {
  const missing: string[] = [];
  const walk = (node: unknown, where: string) => {
    if (!node || typeof node !== 'object') return;
    const n = node as Schema;
    if (typeof n.pattern === 'string') {
      if (typeof n[PATTERN_WORDS] !== 'string') missing.push(`${where}: ${n.pattern}`);
      else if (REGEX_LIKE.test(n[PATTERN_WORDS]) || n[PATTERN_WORDS].includes(n.pattern)) missing.push(`${where}: words look like a regular expression`);
    }
    for (const [k, v] of Object.entries(n)) walk(v, `${where}/${k}`);
  };
  walk(doc, '#');
  assert.deepEqual(missing, []);
});

test('every pattern, enum and discriminator of every request, sent wrong: the message says what is allowed, in words', async () => {
  const all = targets();
  assert.ok(all.filter((x) => x.kind === 'pattern').length >= 15, `patterns found: ${all.filter((x) => x.kind === 'pattern').length}`);
  assert.ok(all.filter((x) => x.kind === 'enum').length >= 10);
  assert.ok(all.filter((x) => x.kind === 'discriminator').length >= 3);
  const problems: string[] = [];
  for (const target of all) {
    const url = target.url.replace('{', '').replace('}', '');
    const headers: Record<string, string> = { ...as(s.owner.session, s.workspaceId) };
    if (target.part === 'headers') headers[target.path[0]!] = String(target.value);
    const payload = target.part === 'body' ? target.value : undefined;
    const res = await h.app.inject({
      method: target.method.toUpperCase() as 'GET',
      url,
      headers,
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload), headers: { ...headers, 'content-type': 'application/json' } }),
    });
    const where = `${target.method.toUpperCase()} ${target.url} ${target.part}.${target.path.join('.')} (${target.kind})`;
    if (res.statusCode !== 422) {
      problems.push(`${where}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      continue;
    }
    const entries = res.json().errors as { message: string; path?: string[] }[];
    for (const e of entries) {
      if (REGEX_LIKE.test(e.message)) problems.push(`${where}: a message shows a regular expression: ${e.message}`);
    }
    const entry = entries.find((e) => JSON.stringify(e.path) === JSON.stringify([target.part, ...target.path]));
    if (!entry) {
      problems.push(`${where}: no entry at its path: ${res.body.slice(0, 300)}`);
      continue;
    }
    if (target.kind === 'pattern') {
      const words = target.schema[PATTERN_WORDS];
      if (entry.message.includes(target.schema.pattern)) problems.push(`${where}: shows its pattern`);
      // The pipeline checks Service-Context itself (on every route, declared or not), in its own words.
      else if (!(target.part === 'headers' && target.path[0] === 'service-context') && !entry.message.endsWith(`must be ${words}`)) problems.push(`${where}: "${entry.message}" lacks its words`);
    } else {
      for (const v of target.allowed ?? []) if (!entry.message.includes(JSON.stringify(v))) problems.push(`${where}: "${entry.message}" does not list ${JSON.stringify(v)}`);
    }
  }
  assert.deepEqual(problems, []);
});

test('a session without Service-Context is told what to send, not how many workspaces it has', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as(s.member.session) });
  assert.equal(res.statusCode, 403);
  const message: string = res.json().errors[0].message;
  assert.match(message, /Service-Context: ws_<id>/);
  assert.doesNotMatch(message, /several/);
});

test('bounds and types in words, not ajv\'s ("must NOT have fewer than 12 characters")', async () => {
  const cases: { payload: unknown; url: string; method: 'POST'; message: string; path: string[] }[] = [
    { method: 'POST', url: '/v1/invitations:accept', payload: { token: 'inv_x', name: 'Ada', password: 'short' }, path: ['body', 'password'], message: 'password must be at least 12 characters long' },
    { method: 'POST', url: '/v1/secrets', payload: { name: '' }, path: ['body', 'name'], message: 'name must not be empty' },
    { method: 'POST', url: '/v1/secrets', payload: { name: 7 }, path: ['body', 'name'], message: 'name must be a string' },
    { method: 'POST', url: '/v1/secrets', payload: { name: 'x'.repeat(300) }, path: ['body', 'name'], message: 'name must be at most 100 characters long' },
  ];
  for (const c of cases) {
    const res = await h.app.inject({ method: c.method, url: c.url, headers: as(s.member.session, s.workspaceId), payload: c.payload as object });
    assert.equal(res.statusCode, 422, `${c.url} ${res.body}`);
    const entry = (res.json().errors as { message: string; path: string[] }[]).find((e) => JSON.stringify(e.path) === JSON.stringify(c.path));
    assert.ok(entry, res.body);
    assert.equal(entry.message, c.message);
  }
  const limit = await h.app.inject({ method: 'GET', url: '/v1/secrets?limit=0', headers: as(s.member.session, s.workspaceId) });
  assert.equal(limit.statusCode, 422);
  assert.equal(limit.json().errors[0].message, 'limit must be at least 1');
});
