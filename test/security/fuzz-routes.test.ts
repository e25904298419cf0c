import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import {
  F,
  ONLY,
  RUNS,
  SEED,
  authorizationOf,
  bodyArb,
  echoes,
  fuzzSetup,
  fuzzTeardown,
  h,
  headerSafe,
  hints,
  queryHints,
  judge,
  reroutes,
  report,
  routes,
  segment,
  sendableId,
  shapedBySchema,
  tallies,
  tally,
  tameBodyArb,
  text,
  withDeadline,
  type Credential,
} from './fuzz-support.js';
import { noStream } from './tenant-fixture.js';

/**
 * Issue 9.1: every route of the OpenAPI document, driven with generated input. Path ids name
 * the fixture's existing resources (so sub-resource handlers run), other kinds' ids, or
 * garbage; bodies are shaped from the route's own schema (with the fixture's ids where a field
 * names one) or are garbage (wrong types, deep nesting, `__proto__`, huge strings up to 100 KB,
 * NUL, SQL and template metacharacters); query strings, Authorization, Service-Context,
 * If-Match, Idempotency-Key and Content-Type are generated too. Every answer is judged by
 * fuzz-support.ts (documented status, never a 5xx or a hang, the route's error shape); a
 * string field a write accepted comes back byte for byte in its answer; per route, most
 * answers get past authentication and some reach the resource (2xx, 409, or a 404 of a body
 * field), so the run tests handlers, not only the first 401.
 * WSP_FUZZ_RUNS sets the generated cases per route (npm run soak:fuzz uses thousands),
 * WSP_FUZZ_SEED the seed, WSP_FUZZ_ROUTE narrows the run to matching routes.
 */
/** A stable number for a route: FNV-1a of its key. */
function seedOf(key: string): number {
  let x = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) x = Math.imul(x ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return x % 1_000_000;
}

before(fuzzSetup);
after(fuzzTeardown);

test('every route answers generated input with a documented non-5xx status in its error shape, reaching its handlers', { timeout: 30 * 60_000 }, async (t) => {
  if (!ONLY) assert.ok(routes.length >= 60, `${routes.length} routes in the document`);
  tallies.clear();
  const hint = hints();
  const queryHint = queryHints();
  const others = Object.values(F.ids);
  for (const route of routes) {
    const queries = (route.op.parameters ?? []).filter((p) => p.in === 'query');
    const headerParams = new Set((route.op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name));
    const requiredHeaders = new Set((route.op.parameters ?? []).filter((p) => p.in === 'header' && p.required).map((p) => p.name));
    const media = Object.keys(route.op.requestBody?.content ?? {});
    const idArb = (kind: string) => {
      const id = F.ids[kind];
      assert.ok(id, `${route.key}: no fixture resource of kind ${kind || '(unknown)'}`);
      return fc.oneof(
        { weight: 5, arbitrary: fc.constant(id) },
        { weight: 1, arbitrary: fc.constantFrom(id.slice(id.indexOf('_') + 1), id.toUpperCase(), `${id}x`) },
        { weight: 1, arbitrary: fc.constantFrom(...others) },
        { weight: 2, arbitrary: text.filter(sendableId) },
      );
    };
    // Each query parameter: absent, shaped by its schema, or garbage (a required one is never absent).
    const garbageQuery = fc.oneof(text, fc.integer().map(String), fc.constantFrom('0', '101', '-1', 'true', 'yes', '1.5'));
    const goodQuery = (p: { name: string; schema?: Record<string, unknown> }): fc.Arbitrary<string | undefined> =>
      p.name === 'service'
        ? fc.constant('git-upload-pack')
        : p.name === 'cursor'
          ? fc.constant(undefined)
          : route.path.startsWith('/v1/platform_metrics/') && queryHint[p.name]
            ? queryHint[p.name]!
            : shapedBySchema(p.schema, 2, hint).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    const queryValue = (p: { name: string; required?: boolean; schema?: Record<string, unknown> }) => {
      const good = goodQuery(p);
      return fc.oneof({ weight: p.required ? 0 : 4, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 3, arbitrary: good }, { weight: 1, arbitrary: garbageQuery });
    };
    const arb = fc.record({
      // A tame case sends a well-formed request (a working credential, the fixture's ids, a
      // body shaped by the schema), so every route's handler runs; the others vary everything.
      tame: fc.oneof({ weight: 2, arbitrary: fc.constant(true) }, { weight: 3, arbitrary: fc.constant(false) }),
      tameCredential: fc.constantFrom<Credential>('owner', 'owner', 'admin', 'token'),
      tameQuery: fc.record(Object.fromEntries(queries.map((q) => [q.name, fc.oneof({ weight: q.required ? 0 : 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: goodQuery(q) })]))),
      tameBody: route.op.requestBody ? tameBodyArb(route, hint) : fc.constant(undefined),
      ids: fc.tuple(...route.params.map((p) => idArb(p.kind))),
      query: fc.record(
        Object.fromEntries([
          ...queries.map((q) => [q.name, queryValue(q)] as const),
          ['unknown', fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: garbageQuery })] as const,
        ]),
      ),
      credential: fc.oneof(
        { weight: 6, arbitrary: fc.constant<Credential>('owner') },
        { weight: 1, arbitrary: fc.constant<Credential>('admin') },
        { weight: 1, arbitrary: fc.constant<Credential>('member') },
        { weight: 3, arbitrary: fc.constant<Credential>('token') },
        { weight: 1, arbitrary: fc.constant<Credential>('fuzzed') },
        { weight: 1, arbitrary: fc.constant<Credential>('none') },
      ),
      fuzzedAuthorization: fc.oneof(
        text.map((x) => `Bearer ${x}`),
        text,
        fc.constantFrom(
          'Basic YTpi',
          'bearer ',
          'Bearer',
          `Bearer ${F.seed.apiToken}x`,
          `Bearer ${F.seed.apiToken.slice(0, -1)}`,
          `Bearer ${F.seed.owner.session.toLowerCase()}`,
          'Bearer a.b.c',
          `Bearer ${'A'.repeat(8000)}`,
        ),
      ),
      serviceContext: fc.oneof(
        { weight: 6, arbitrary: fc.constant<string | undefined>(F.seed.workspaceId) },
        { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('ws_00000000000000000000000000', F.seed.workspaceId.toUpperCase(), F.seed.workspaceId.slice(3)) },
        { weight: 1, arbitrary: text },
      ),
      ifMatch: fc.oneof(
        { weight: 4, arbitrary: fc.constant<string | undefined>('*') },
        { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
        { weight: 1, arbitrary: fc.constant('"0123456789abcdef"') },
        { weight: 1, arbitrary: text },
      ),
      idemKey: fc.oneof(
        { weight: requiredHeaders.has('idempotency-key') ? 1 : 3, arbitrary: fc.constant<string | undefined>(undefined) },
        { weight: 2, arbitrary: fc.uuid() },
        { weight: 1, arbitrary: fc.constant('fuzz-same-key') },
        { weight: 1, arbitrary: text },
      ),
      contentType: fc.oneof(
        { weight: 16, arbitrary: fc.constant<string | undefined>(media[0]) },
        { weight: 1, arbitrary: fc.constantFrom<string | undefined>(...media.map((m) => `${m}; charset=utf-8`), ...media, undefined) },
        {
          weight: 1,
          arbitrary: fc.constantFrom<string | undefined>(
            'text/plain',
            'application/xml',
            'multipart/form-data; boundary=x',
            'application/json-patch+json',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
            '*/*',
            'json',
            undefined,
          ),
        },
        { weight: 1, arbitrary: text },
      ),
      gitProtocol: fc.oneof(fc.constant<string | undefined>(undefined), fc.constantFrom('version=2', 'version=1'), text),
      requestId: fc.oneof({ weight: 4, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: text }),
      body: route.op.requestBody ? bodyArb(route, hint) : fc.constant(undefined),
    });
    await fc.assert(
      fc.asyncProperty(arb, async (generated) => {
        const input = generated.tame
          ? {
              ...generated,
              ids: route.params.map((p) => F.ids[p.kind]!),
              query: generated.tameQuery,
              credential: generated.tameCredential,
              serviceContext: F.seed.workspaceId,
              ifMatch: '*',
              idemKey: requiredHeaders.has('idempotency-key') ? `tame-${randomUUID()}` : undefined,
              contentType: media[0],
              gitProtocol: undefined,
              requestId: undefined,
              body: generated.tameBody,
            }
          : generated;
        let url = route.path;
        route.params.forEach((p, i) => (url = url.replace(`{${p.name}}`, segment(String(input.ids[i] ?? 'x')))));
        const qs = new URLSearchParams(Object.entries(input.query).filter(([, v]) => v !== undefined) as [string, string][]).toString();
        const headers: Record<string, string> = noStream(route);
        const set = (name: string, value: string | undefined) => {
          // Header values cannot hold control characters: a client could not send them at all.
          if (headerSafe(value)) headers[name] = value!;
        };
        set('authorization', await authorizationOf(route, input.credential, input.fuzzedAuthorization));
        set('service-context', input.serviceContext);
        if (headerParams.has('if-match')) set('if-match', input.ifMatch);
        if (route.method !== 'GET') set('idempotency-key', input.idemKey);
        if (headerParams.has('git-protocol')) set('git-protocol', input.gitProtocol);
        set('x-request-id', input.requestId);
        if (input.body !== undefined) set('content-type', input.contentType);
        const target = qs ? `${url}?${qs}` : url;
        const res = await withDeadline(
          `${route.method} ${target}`,
          h.app.inject({ method: route.method as 'GET', url: target, headers, ...(input.body !== undefined ? { payload: input.body } : {}) }),
        );
        const shown = typeof input.body === 'string' ? input.body.slice(0, 200) : '';
        const where = `${route.method} ${target.slice(0, 300)} [${input.credential}] ${shown} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
        judge(route, res, where, reroutes(route, input.ids));
        if (typeof input.body === 'string' && (headers['content-type'] ?? '').startsWith('application/json')) {
          let sent: unknown;
          try {
            sent = JSON.parse(input.body);
          } catch {
            sent = undefined;
          }
          echoes(sent, res, where);
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined, 'prototype polluted');
      }),
      // A seed per route (from the run's seed and the route's own name, not its place in the
      // document: a route added elsewhere changes no other route's cases).
      { numRuns: RUNS, seed: SEED + seedOf(route.key), endOnFailure: true },
    );
    const x = tally(route);
    assert.equal(x.cases, RUNS, `${route.key}: every generated request was made`);
    if (!route.public) assert.ok(x.authenticated >= RUNS * 0.4, `${route.key}: only ${x.authenticated} of ${RUNS} answers got past authentication: ${JSON.stringify([...x.statuses])}`);
    assert.ok(x.reached >= 1, `${route.key}: no answer came from the resource itself (2xx, 409, a body field's 404): ${JSON.stringify([...x.statuses])}\n${x.samples.join('\n')}`);
  }
  report(t, 'fuzz');
});
