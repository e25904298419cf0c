import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError, type TestApp } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { dashboardBody } from '../dashboards/fixtures.js';
import { secretClient } from '../secrets/secret-client.js';

/**
 * What every part of a request may hold, whatever the route (src/http/validation.ts):
 * - a route takes exactly the body and query parameters it declares: a bodyless one refuses a
 *   body (an empty one, `null` or `{}` count as none), one without query parameters refuses any;
 * - no string value anywhere holds NUL or an unpaired UTF-16 surrogate;
 * - objects and arrays nest at most 64 levels (the part itself being the first).
 * Each is 422 (7003) at the exact path, before any 403 or 404.
 */

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
const owner = (extra: Record<string, string> = {}) => as(s.owner.session, s.workspaceId, extra);
const paths = (res: Res) => (res.json().errors as { path?: string[] }[]).map((e) => JSON.stringify(e.path));

function expect422(res: Res, path: string[], message?: RegExp) {
  assert.equal(res.statusCode, 422, res.body.slice(0, 500));
  const e = firstError(res.json());
  assert.equal(e.code, 7003, res.body.slice(0, 500));
  assert.deepEqual(e.path, path, res.body.slice(0, 500));
  if (message) assert.match(e.message, message);
}

interface Operation {
  method: string;
  path: string;
  requestBody?: unknown;
  parameters?: { in: string; name: string }[];
}

let operations: Operation[] = [];
const h = useTestApp({
  setup: async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>> }>();
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map(([method, op]) => ({ method: method.toUpperCase(), path, ...op })),
    );
  },
});
const s = h.seeded;

/** A concrete URL of a documented path: each parameter a short well-formed id. */
const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, 'abc');
/** The OAuth endpoints answer in RFC 6749's format (400 JSON), not the envelope (docs/spec-gaps.md, "Credentials and tokens"). */
const OAUTH_FORMAT = new Set(['/v1/oauth/device_authorization', '/v1/oauth/token']);

describe('a route takes only the parts it declares', () => {
  test('every documented write without a request body refuses {"foo":1} at ["body","foo"] and [1,2] at ["body"]', async () => {
    const bodyless = operations.filter((o) => o.method !== 'GET' && !o.requestBody);
    assert.ok(bodyless.length >= 10, `found ${bodyless.length}`);
    const problems: string[] = [];
    for (const o of bodyless) {
      for (const [payload, path] of [
        [{ foo: 1 }, ['body', 'foo']],
        [[1, 2], ['body']],
        ['text', ['body']],
      ] as const) {
        const headers = { ...owner({ 'if-match': '*' }), 'content-type': 'application/json' };
        const res = await h.app.inject({ method: o.method as 'POST', url: urlOf(o.path), headers, payload: JSON.stringify(payload) });
        if (res.statusCode !== 422 || !paths(res).includes(JSON.stringify(path))) problems.push(`${o.method} ${o.path} ${JSON.stringify(payload)}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('every documented operation without query parameters refuses one at ["query", name]', async () => {
    // Fastify validates the body before the query: operations that need a body are left to the next test.
    const queryless = operations.filter((o) => !o.requestBody && !(o.parameters ?? []).some((p) => p.in === 'query'));
    assert.ok(queryless.length >= 10, `found ${queryless.length}`);
    const problems: string[] = [];
    for (const o of queryless) {
      const res = await h.app.inject({ method: o.method as 'GET', url: `${urlOf(o.path)}?wsp_unknown=1`, headers: owner({ 'if-match': '*' }) });
      if (OAUTH_FORMAT.has(o.path)) {
        if (res.statusCode < 400 || res.statusCode >= 500) problems.push(`${o.method} ${o.path}: ${res.statusCode}`);
        continue;
      }
      if (res.statusCode !== 422 || !paths(res).includes(JSON.stringify(['query', 'wsp_unknown']))) problems.push(`${o.method} ${o.path}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    assert.deepEqual(problems, []);
  });

  test('an operation with a body but no query parameters refuses one too (a well-formed body)', async () => {
    expect422(await h.app.inject({ method: 'POST', url: '/v1/secrets?dry_run=1', headers: owner(), payload: { name: 'q' } }), ['query', 'dry_run']);
    expect422(await h.app.inject({ method: 'POST', url: '/v1/api_tokens?x=1', headers: owner(), payload: { name: 'q' } }), ['query', 'x']);
  });

  test('GET /v1/compute/suspensions (a bare array, no paging) refuses an unknown query parameter', async () => {
    expect422(await h.app.inject({ method: 'GET', url: '/v1/compute/suspensions?limit=5', headers: owner() }), ['query', 'limit'], /not an allowed property/);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/compute/suspensions', headers: owner() })).statusCode, 200);
  });

  test('a bodyless custom method takes no body, an empty body (also with Content-Type JSON), null or {}; a refused body changes nothing', async () => {
    const api = secretClient(h, owner());
    const secret = await api.createSecret();
    const v = await api.addVersion(secret.id, Buffer.from('x'));
    const url = `/v1/secrets/${secret.id}/versions/${v.id}:disable`;
    const refused = await h.app.inject({ method: 'POST', url, headers: owner({ 'if-match': v.etag }), payload: { state: 'enabled' } });
    expect422(refused, ['body', 'state'], /state is not allowed: this operation takes no body/);
    expect422(await h.app.inject({ method: 'POST', url, headers: { ...owner({ 'if-match': v.etag }), 'content-type': 'application/json' }, payload: '[1,2]' }), ['body'], /must be empty/);
    assert.equal((await api.getVersion(secret.id, v.id)).state, 'enabled');
    const sent: [string, Record<string, string>][] = [
      ['', {}],
      ['', { 'content-type': 'application/json' }],
      ['', { 'content-type': 'application/json; charset=utf-8' }],
      ['null', { 'content-type': 'application/json' }],
      ['{}', { 'content-type': 'application/json' }],
      [' \r\n', { 'content-type': 'application/json' }],
    ];
    for (const [payload, headers] of sent) {
      const res = await h.app.inject({ method: 'POST', url, headers: { ...owner({ 'if-match': '*' }), ...headers }, payload });
      assert.equal(res.statusCode, 200, `${JSON.stringify(payload)} ${JSON.stringify(headers)}: ${res.body}`);
    }
    // DELETE likewise.
    const other = await api.createSecret();
    expect422(await h.app.inject({ method: 'DELETE', url: `/v1/secrets/${other.id}`, headers: owner({ 'if-match': '*' }), payload: { cascade: true } }), ['body', 'cascade']);
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/secrets/${other.id}`, headers: { ...owner({ 'if-match': '*' }), 'content-type': 'application/json' }, payload: '' });
    assert.equal(del.statusCode, 204, del.body);
  });

  test('an empty body with Content-Type JSON where a body is needed: 422 (7003) on ["body"], the body is required', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: { ...owner(), 'content-type': 'application/json' }, payload: '' });
    expect422(res, ['body'], /body is required: this operation takes a JSON body/);
    expect422(await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: owner() }), ['body'], /is required/);
  });

  test('the order holds: a body sent to a bodyless route is 422 before the 403 of a missing role and the 404 of an unknown id', async () => {
    const member = as(s.member.session, s.workspaceId, { 'if-match': '*' });
    expect422(await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${s.apiTokenId}`, headers: member, payload: { why: 'x' } }), ['body', 'why']);
    expect422(await h.app.inject({ method: 'DELETE', url: '/v1/secrets/sec_nothing', headers: owner({ 'if-match': '*' }), payload: { why: 'x' } }), ['body', 'why']);
  });
});

describe('text that cannot be stored: NUL and unpaired surrogates, in every part (422 7003 at the exact path)', () => {
  const NUL_OR_SURROGATE = /must not contain NUL \(U\+0000\) or an unpaired UTF-16 surrogate/;
  // A URL (path, query) is percent-decoded as UTF-8, which has no form for a lone surrogate
  // (it decodes to U+FFFD or is refused): only NUL can arrive there.
  const bad = { nul: 'a\u0000b', high: 'a\ud800b', low: 'a\udc00b', highAtEnd: 'ab\udbff', lowAtStart: '\udfffab' };
  const cases: [string, () => Promise<Res>, string[]][] = [
    ...Object.entries(bad).map(([kind, text]): [string, () => Promise<Res>, string[]] => [
      `body field (${kind})`,
      () => h.app.inject({ method: 'POST', url: '/v1/secrets', headers: owner(), payload: { name: text } }),
      ['body', 'name'],
    ]),
    ...Object.entries(bad).map(([kind, text]): [string, () => Promise<Res>, string[]] => [
      `nested free-form value (${kind})`,
      () => h.app.inject({ method: 'POST', url: '/v1/dashboards', headers: owner(), payload: dashboardBody({ default_filter_values: { time: { from: -60, to: 0 }, notes: { list: ['ok', text] } } }) }),
      ['body', 'default_filter_values', 'notes', 'list', '1'],
    ]),
    ['query (NUL)', () => h.app.inject({ method: 'GET', url: '/v1/secrets?cursor=ab%00cd', headers: owner() }), ['query', 'cursor']],
    ['path parameter (NUL)', () => h.app.inject({ method: 'GET', url: '/v1/secrets/sec_ab%00cd', headers: owner() }), ['path', 'id']],
    ...Object.entries(bad).map(([kind, text]): [string, () => Promise<Res>, string[]] => [
      `header (${kind})`,
      () => h.app.inject({ method: 'DELETE', url: '/v1/secrets/sec_abc', headers: owner({ 'if-match': text }) }),
      ['headers', 'if-match'],
    ]),
  ];
  for (const [name, send, path] of cases) {
    test(name, async () => expect422(await send(), path, NUL_OR_SURROGATE));
  }

  test('a well-formed surrogate pair (an emoji) is fine and comes back as sent', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: owner(), payload: { name: 'key \ud83d\udd11' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().name, 'key \u{1F511}');
  });
});

describe('nesting depth: at most 64 levels, the part itself the first', () => {
  /** `n` arrays, one inside the other, as JSON text (JSON.stringify itself overflows the stack at 10,000). */
  const nestedText = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
  /** The JSON text of `body`, where the string "DEEP" stands for `n` nested arrays. */
  const withDeep = (body: object, n: number) => JSON.stringify(body).replace('"DEEP"', nestedText(n));
  const sendJson = (method: 'POST' | 'PATCH', url: string, payload: string, extra: Record<string, string> = {}) =>
    h.app.inject({ method, url, headers: { ...owner(extra), 'content-type': 'application/json' }, payload });
  // body (1) > default_filter_values (2) > deep (3) > ... : the container at level 65 is reached by deep + 62 indices.
  const pastLimit = ['body', 'default_filter_values', 'deep', ...Array<string>(62).fill('0')];

  test('a dashboard with default_filter_values 10,000 levels deep (a 20 KB body) is 422 at the first level past 64, not a 500', async () => {
    const body = withDeep(dashboardBody({ default_filter_values: { deep: 'DEEP' } }), 10_000);
    assert.ok(body.length < 40_000);
    expect422(await sendJson('POST', '/v1/dashboards', body), pastLimit, /nests objects and arrays more than 64 levels deep/);
  });

  test('64 levels are accepted and stored; 65 are refused', async () => {
    const ok = await sendJson('POST', '/v1/dashboards', withDeep(dashboardBody({ default_filter_values: { deep: 'DEEP' } }), 62));
    assert.equal(ok.statusCode, 201, ok.body.slice(0, 300));
    assert.equal(JSON.stringify(ok.json().default_filter_values.deep), nestedText(62));
    expect422(await sendJson('POST', '/v1/dashboards', withDeep(dashboardBody({ default_filter_values: { deep: 'DEEP' } }), 63)), pastLimit);
    // Objects count like arrays.
    let obj: unknown = 1;
    for (let i = 0; i < 63; i++) obj = { o: obj };
    expect422(await h.app.inject({ method: 'POST', url: '/v1/dashboards', headers: owner(), payload: dashboardBody({ default_filter_values: { deep: obj } }) }), [
      'body',
      'default_filter_values',
      'deep',
      ...Array<string>(62).fill('o'),
    ]);
  });

  test("other routes' free-form objects and fixed fields: an install's values (with an Idempotency-Key), a secret's data, a PATCH", async () => {
    const install = await sendJson('POST', '/v1/installs', withDeep({ name: 'deep', package_id: 'pkg_abc', version_id: 'pkgv_abc', values: { deep: 'DEEP' } }, 10_000), {
      'idempotency-key': 'deep-install',
    });
    expect422(install, ['body', 'values', 'deep', ...Array<string>(62).fill('0')]);
    const secret = await secretClient(h, owner()).createSecret();
    const version = await sendJson('POST', `/v1/secrets/${secret.id}/versions`, withDeep({ data: 'DEEP' }, 10_000));
    assert.equal(version.statusCode, 422);
    assert.ok(paths(version).includes(JSON.stringify(['body', 'data', ...Array<string>(63).fill('0')])), version.body.slice(0, 300));
    const patch = await sendJson('PATCH', '/v1/dashboards/dash_abc', withDeep({ default_filter_values: { deep: 'DEEP' } }, 10_000), { 'if-match': '*' });
    expect422(patch, pastLimit);
  });
});
