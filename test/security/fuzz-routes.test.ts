import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PROPERTY_SEED } from '../helpers/property.js';
import { createTestApp, type TestApp, type Seed } from '../helpers/harness.js';

/**
 * Every route of the OpenAPI document, driven with generated input: well-shaped, boundary and
 * garbage path ids, query strings, headers and bodies. Whatever comes in, the answer is a
 * documented status, in the envelope, never a 5xx and never a hang.
 * WSP_FUZZ_RUNS sets the runs per route (npm run soak uses thousands).
 */
const RUNS = Number(process.env.WSP_FUZZ_RUNS ?? 20);
const SEED = PROPERTY_SEED;
/** Statuses any route may answer whatever its document says: body limits and unmatched paths. */
const GENERIC = new Set([404, 405, 413, 415, 429]);

interface Operation {
  parameters?: { in: string; name: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

let h: TestApp;
let s: Seed;
let paths: Record<string, Record<string, Operation>>;

before(async () => {
  h = await createTestApp();
  s = await h.seed();
  paths = (h.app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }).paths;
});
after(() => h.close());

const NASTY = [
  '',
  ' ',
  '\u0000',
  '..',
  '../../etc/passwd',
  "' or 1=1 --",
  '"; drop table users; --',
  '{{#x}}{{/x}}{{{y}}}',
  '${7*7}',
  '__proto__',
  'constructor',
  '%00',
  '\u202e\u0301😀',
  'ws_',
  'a'.repeat(54),
  'a'.repeat(55),
  'a'.repeat(600),
];
const nasty = fc.constantFrom(...NASTY);
const text = fc.oneof(nasty, fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }));

const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const rawBodies = fc.constantFrom(
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  deep(200),
  '[' .repeat(500) + ']'.repeat(500),
  '{"name":',
  'null',
  '""',
  '[]',
  '{}',
  '1e999',
  '{"name":"\\u0000"}',
);

function bodyArb(op: Operation) {
  const schema = (op.requestBody as { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } | undefined)?.content?.['application/json']?.schema;
  const keys = Object.keys(schema?.properties ?? {});
  const shaped = keys.length
    ? fc.dictionary(fc.constantFrom(...keys, '__proto__', 'extra'), fc.oneof(fc.jsonValue({ maxDepth: 3 }), text), { maxKeys: keys.length + 1 }).map((o) => JSON.stringify(o))
    : fc.constant('{}');
  return fc.oneof(shaped, fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), rawBodies);
}

function isEnvelope(body: unknown): boolean {
  const b = body as { success?: unknown; errors?: unknown; result?: unknown; error?: unknown };
  if (b && typeof b.error === 'string') return true; // OAuth endpoints answer RFC 6749 errors
  return b?.success === false && Array.isArray(b.errors) && typeof b.result === 'object' && b.result !== null && Object.keys(b.result).length === 0;
}

test('every route answers generated input with a documented non-5xx status in the envelope', async () => {
  const ops = Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => ['get', 'post', 'patch', 'put', 'delete'].includes(m))
      .map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
  assert.ok(ops.length >= 5, 'the document lists the routes');
  const statuses = new Map<number, number>();
  for (const { path, method, op } of ops) {
    const params = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
    const queries = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    const documented = new Set(Object.keys(op.responses).map(Number));
    const arb = fc.record({
      ids: fc.array(fc.oneof(text, fc.constant(s.workspaceId)), { minLength: params.length, maxLength: params.length }),
      query: fc.dictionary(fc.constantFrom(...queries, 'unknown'), fc.oneof(text, fc.integer().map(String)), { maxKeys: 3 }),
      credential: fc.constantFrom('session', 'token', 'garbage', 'none'),
      serviceContext: fc.oneof(fc.constant(s.workspaceId), fc.constant(undefined), text),
      ifMatch: fc.oneof(fc.constant(undefined), fc.constant('*'), text),
      idemKey: fc.oneof(fc.constant(undefined), text),
      body: op.requestBody ? bodyArb(op) : fc.constant(undefined),
    });
    await fc.assert(
      fc.asyncProperty(arb, async (input) => {
        let url = path;
        params.forEach((name, i) => {
          url = url.replace(`{${name}}`, encodeURIComponent(input.ids[i] ?? 'x'));
        });
        const qs = new URLSearchParams(input.query).toString();
        const headers: Record<string, string> = {};
        if (input.credential === 'session') headers.authorization = `Bearer ${s.owner.session}`;
        if (input.credential === 'token') headers.authorization = `Bearer ${s.apiToken}`;
        if (input.credential === 'garbage') headers.authorization = 'Bearer sk_svc_nope';
        const setHeader = (name: string, value: string | undefined) => {
          // Header values cannot hold control characters; those are a client-side error.
          if (value !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(value)) headers[name] = value;
        };
        setHeader('service-context', input.serviceContext);
        setHeader('if-match', input.ifMatch);
        setHeader('idempotency-key', input.idemKey);
        if (input.body !== undefined) headers['content-type'] = 'application/json';
        const res = await Promise.race([
          h.app.inject({ method: method as 'GET', url: qs ? `${url}?${qs}` : url, headers, ...(input.body !== undefined ? { payload: input.body } : {}) }),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`hang: ${method} ${url}`)), 10_000)),
        ]);
        const where = `${method} ${path} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        assert.ok(res.statusCode < 500, where);
        assert.ok(documented.has(res.statusCode) || GENERIC.has(res.statusCode), `undocumented status: ${where}`);
        if (res.statusCode >= 400) {
          assert.ok(isEnvelope(res.json()), `not an error envelope: ${where}`);
          assert.ok(!/at .*\.(ts|js):\d+|SQLITE_|syntax error|relation "/i.test(res.body), `leaks internals: ${where}`);
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined, 'prototype polluted');
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  }
  const total = [...statuses.values()].reduce((a, b) => a + b, 0);
  assert.equal(total, ops.length * RUNS, 'every generated request was made');
  // The generators reach past authentication and validation, not only into the first 401.
  for (const status of [200, 401, 403, 422]) assert.ok((statuses.get(status) ?? 0) > 0, `no ${status} among ${JSON.stringify([...statuses])}`);
});

/** Boundary values beyond NASTY: lone surrogates, astral and combining text, numbers as text, long unicode. */
const BOUNDARY = [
  ...NASTY,
  '\ud800',
  'x\udc00',
  '\u0000x',
  '😀'.repeat(60),
  'e\u0301\u0301\u0301',
  '\u2028\u2029\ufeff',
  '-1',
  '0',
  '1e309',
  'NaN',
  'ws_00000000000000000000000000',
  'sec_%2e%2e',
];

/** A stand-in for a required body property: enough to get past "required" to the property under test. */
function filler(schema: Record<string, unknown> | undefined): unknown {
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  switch (schema?.type) {
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'object':
      return {};
    case 'array':
      return [];
    default:
      return 'x';
  }
}

test('every boundary value in every path id, query parameter and top-level body property, with a working credential: never a 5xx', async () => {
  let sent = 0;
  for (const [path, item] of Object.entries(paths)) {
    for (const [m, op] of Object.entries(item)) {
      if (!['get', 'post', 'patch', 'put', 'delete'].includes(m)) continue;
      const method = m.toUpperCase();
      const documented = new Set(Object.keys(op.responses).map(Number));
      const params = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      const queries = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      const schema = (op.requestBody as { content?: Record<string, { schema?: { properties?: Record<string, Record<string, unknown>>; required?: string[] } }> } | undefined)?.content?.['application/json']?.schema;
      const props = Object.keys(schema?.properties ?? {});
      const base = Object.fromEntries((schema?.required ?? []).map((k) => [k, filler(schema?.properties?.[k])]));
      const send = async (ids: string | null, query: Record<string, string>, body: unknown) => {
        let url = path;
        for (const name of params) url = url.replace(`{${name}}`, encodeURIComponent(ids ?? s.workspaceId));
        const qs = new URLSearchParams(query).toString();
        const headers: Record<string, string> = { authorization: `Bearer ${s.owner.session}`, 'service-context': s.workspaceId };
        if (method !== 'GET') {
          headers['if-match'] = '*';
          headers['idempotency-key'] = `b-${sent}`;
        }
        if (body !== undefined) headers['content-type'] = 'application/json';
        const res = await h.app.inject({ method: method as 'GET', url: qs ? `${url}?${qs}` : url, headers, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
        sent++;
        const where = `${method} ${url}${qs ? `?${qs}` : ''} ${body === undefined ? '' : JSON.stringify(body).slice(0, 120)} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
        assert.ok(res.statusCode < 500, where);
        assert.ok(documented.has(res.statusCode) || GENERIC.has(res.statusCode), `undocumented status: ${where}`);
        if (res.statusCode >= 400) assert.ok(isEnvelope(res.json()), `not an error envelope: ${where}`);
      };
      const body = op.requestBody ? base : undefined;
      for (const value of BOUNDARY) {
        // A lone surrogate has no percent-encoding: it cannot be in a URL at all.
        if (params.length > 0 && !/[\ud800-\udfff]/.test(value.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))) await send(value, {}, body);
        for (const q of queries) await send(null, { [q]: value }, body);
        for (const prop of props) await send(null, {}, { ...base, [prop]: value });
      }
    }
  }
  assert.ok(sent > 1000, `${sent} requests`);
});
