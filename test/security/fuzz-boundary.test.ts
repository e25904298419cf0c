import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { F, NASTY, ONLY, authorizationOf, fuzzSetup, fuzzTeardown, h, judge, reroutes, report, routes, segment, sendableId, tallies, tally, wellFormed, withDeadline } from './fuzz-support.js';
import { noStream } from './tenant-fixture.js';

/**
 * Issue 9.1, the boundary half of the fuzzing (fuzz-routes.test.ts is the generated half):
 * every boundary value in every path id, query parameter and top-level body property of every
 * route, one at a time, the rest of the request well-formed and sent with a working
 * credential. Every answer is judged by fuzz-support.ts (documented status, never a 5xx or a
 * hang, the route's error shape), and none is a 401. The well-formed rest (the fixture's ids,
 * required body properties with values the handler accepts, If-Match and Idempotency-Key) is
 * first sent alone: per route, at least one answer must come from the handler itself (2xx,
 * 409, a body field's 404), or the route's boundary values only ever met validation.
 */
before(fuzzSetup);
after(fuzzTeardown);

/** Boundary values beyond NASTY: lone surrogates, astral and combining text, numbers as text, long unicode (each once). */
const BOUNDARY = [
  ...new Set([
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
    'x'.repeat(100_000),
  ]),
];

/**
 * A well-formed value for a required body property, so that a case gets past validation to the
 * property under test and on to the handler: an existing resource or a real choice where the
 * field names one (fuzz-support's `wellFormed`), else a value of the schema's type and bounds.
 */
function filler(key: string, schema: Record<string, unknown> | undefined, known: Record<string, unknown>): unknown {
  if (key in known) return known[key];
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

test('every boundary value in every path id, query parameter and top-level body property, with a working credential: never a 5xx', { timeout: 30 * 60_000 }, async (t) => {
  let sent = 0;
  tallies.clear();
  const known = wellFormed();
  for (const route of routes) {
    const queries = (route.op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    const content = route.op.requestBody?.content ?? {};
    const media = Object.keys(content)[0];
    const schema = content['application/json']?.schema;
    const props = Object.keys(schema?.properties ?? {});
    const base = Object.fromEntries((schema?.required ?? []).map((k: string) => [k, filler(k, schema?.properties?.[k], known)]));
    const send = async (ids: string | null, query: Record<string, string>, body: unknown) => {
      let url = route.path;
      route.params.forEach((p) => (url = url.replace(`{${p.name}}`, segment(ids ?? F.ids[p.kind]!))));
      const qs = new URLSearchParams({ ...(route.path.endsWith('/info/refs') ? { service: 'git-upload-pack' } : {}), ...query }).toString();
      const headers: Record<string, string> = { ...noStream(route), authorization: (await authorizationOf(route, 'owner', ''))!, 'service-context': F.seed.workspaceId };
      if (route.method !== 'GET') {
        headers['if-match'] = '*';
        headers['idempotency-key'] = `b-${sent}`;
      }
      const payload =
        body === undefined
          ? undefined
          : media === 'application/json'
            ? JSON.stringify(body)
            : media === 'application/x-www-form-urlencoded'
              ? new URLSearchParams(body as Record<string, string>).toString()
              : '0000';
      if (payload !== undefined) headers['content-type'] = media!;
      const target = qs ? `${url}?${qs}` : url;
      const res = await withDeadline(`${route.method} ${target}`, h.app.inject({ method: route.method as 'GET', url: target, headers, ...(payload !== undefined ? { payload } : {}) }));
      sent++;
      judge(route, res, `${route.method} ${target.slice(0, 200)} ${payload?.slice(0, 120) ?? ''} -> ${res.statusCode} ${res.body.slice(0, 200)}`, ids !== null && reroutes(route, [ids]));
    };
    const body = route.op.requestBody ? base : undefined;
    await send(null, {}, body);
    for (const value of BOUNDARY) {
      if (route.params.length > 0 && sendableId(value)) await send(value, {}, body);
      for (const q of queries) await send(null, { [q]: value }, body);
      for (const prop of props) await send(null, {}, { ...base, [prop]: value });
    }
    const x = tally(route);
    if (!route.public) assert.ok(x.authenticated === x.cases, `${route.key}: a working credential was refused: ${JSON.stringify([...x.statuses])}`);
    assert.ok(x.reached >= 1, `${route.key}: no case reached the handler (2xx, 409, a body field's 404), not even the well-formed one: ${JSON.stringify([...x.statuses])}\n${x.samples.join('\n')}`);
  }
  if (!ONLY) assert.ok(sent > 1000, `${sent} requests`);
  report(t, 'boundary');
});
