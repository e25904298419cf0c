import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createTestApp, as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * The OpenAPI document (docs/spec-gaps.md, "Conventions"): 3.1, version 1.0.0, HTTP bearer security, and every
 * authenticated /v1 operation documents its 401 and 422, each error response being the one
 * shared ErrorEnvelope component.
 */
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
interface Doc {
  openapi: string;
  info: { version: string; title: string };
  security?: Record<string, string[]>[];
  components: { securitySchemes: Record<string, { type: string; scheme?: string }>; schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
  paths: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
let doc: Doc;
const h = useTestApp({
  seed: false,
  setup: async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = res.json();
  },
});

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op })),
  );
/** Operations that need a credential: those not marked `security: []`. */
const authenticated = () => operations().filter(({ op }) => !(Array.isArray(op.security) && op.security.length === 0));

test('OpenAPI 3.1.x, info.version 1.0.0, a title', () => {
  assert.match(doc.openapi, /^3\.1\.\d+$/);
  assert.equal(doc.info.version, '1.0.0');
  assert.ok(doc.info.title.length > 0);
});

test('an HTTP bearer security scheme or the session cookie, required by default', () => {
  const schemes = Object.entries(doc.components.securitySchemes).filter(([, s]) => s.type === 'http' && s.scheme?.toLowerCase() === 'bearer');
  assert.equal(schemes.length, 1);
  const name = schemes[0]![0];
  assert.deepEqual(doc.components.securitySchemes.cookie, { ...doc.components.securitySchemes.cookie, type: 'apiKey', in: 'cookie', name: 'wsp_session' });
  assert.deepEqual(doc.security, [{ [name]: [] }, { cookie: [] }]);
  for (const { path, method, op } of authenticated()) {
    if (op.security)
      assert.ok(
        op.security.some((r) => name in r),
        `${method} ${path} names another scheme`,
      );
  }
});

test('the shared ErrorEnvelope component has the spec fields', () => {
  const env = doc.components.schemas.ErrorEnvelope;
  assert.ok(env, 'components.schemas.ErrorEnvelope');
  for (const f of ['success', 'errors', 'result']) assert.ok(env.properties?.[f], f);
  assert.deepEqual([...(env.required ?? [])].sort(), ['errors', 'result', 'success']);
});

test('every authenticated /v1 operation documents 401 and 422; every error response refers to ErrorEnvelope', () => {
  const ops = authenticated().filter(({ path }) => path.startsWith('/v1/') && path !== '/v1/openapi.json');
  assert.ok(ops.length >= 8, `found ${ops.length} operations`);
  const problems: string[] = [];
  for (const { path, method, op } of ops) {
    for (const status of ['401', '422']) if (!op.responses[status]) problems.push(`${method} ${path}: no ${status}`);
    for (const [status, response] of Object.entries(op.responses)) {
      if (Number(status) < 400) continue;
      const ref = response.content?.['application/json']?.schema?.$ref;
      if (ref !== '#/components/schemas/ErrorEnvelope') problems.push(`${method} ${path} ${status}: schema ${JSON.stringify(response.content)}`);
    }
  }
  assert.deepEqual(problems, []);
});

test('the unauthenticated routes are exactly the system, OAuth and metadata ones', () => {
  const open = operations()
    .filter(({ op }) => Array.isArray(op.security) && op.security.length === 0)
    .map(({ path }) => path);
  for (const path of open) {
    assert.ok(
      ['/healthz', '/readyz', '/metrics', '/license', '/v1/sessions', '/v1/setup'].includes(path) ||
        path.startsWith('/v1/auth/') ||
        path.startsWith('/v1/oauth/') ||
        path.startsWith('/.well-known/') ||
        path === '/device',
      `${path} is open without a credential`,
    );
  }
});

test('every $ref resolves inside the document', () => {
  const text = JSON.stringify(doc);
  const refs = new Set([...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!));
  assert.ok(refs.size > 0);
  for (const ref of refs) {
    assert.match(ref, /^#\//, ref);
    let node: unknown = doc;
    for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    assert.ok(node !== undefined, `unresolved ${ref}`);
  }
});

/** The OAuth endpoints answer in RFC 6749's error format (400), with an error handler of their own. */
const OWN_ERROR_FORMAT = new Set(['/v1/oauth/device_authorization', '/v1/oauth/token']);
const WRITES = new Set(['post', 'put', 'patch', 'delete']);
const isPublic = (op: Operation) => Array.isArray(op.security) && op.security.length === 0;

/**
 * What the pipeline can answer on any route, as docs/spec-gaps.md says: 422 and 500 everywhere;
 * 413 and 415 where a body is read; 401 and 429 where a credential is needed, and there 403
 * (Service-Context, role: every authenticated route resolves one) and, on writes, 409 (an
 * Idempotency-Key in flight: the pipeline takes one on every write).
 */
function pipelineStatuses(method: string, op: Operation): number[] {
  const out = [422, 500];
  if (WRITES.has(method)) out.push(413, 415);
  if (!isPublic(op)) out.push(401, 403, 429);
  if (!isPublic(op) && WRITES.has(method)) out.push(409);
  return out;
}

test('every operation documents each status the pipeline can answer on it (401, 403, 409, 413, 415, 422, 429, 500)', () => {
  const problems: string[] = [];
  for (const { path, method, op } of operations()) {
    if (OWN_ERROR_FORMAT.has(path)) continue;
    for (const status of pipelineStatuses(method, op)) {
      if (!op.responses[String(status)]) problems.push(`${method} ${path}: no ${status}`);
    }
  }
  assert.deepEqual(problems, []);
  // The example the defect was found on.
  assert.ok(doc.paths['/v1/sessions/current']!.delete!.responses['409'], 'DELETE /v1/sessions/current takes an Idempotency-Key: 409 7031');
  // An operation's own statuses keep their own description (here the secret's unreadable payload).
  assert.match(JSON.stringify(doc.paths['/v1/secrets/{id}/versions/{vid}:access']!.get!.responses['500']), /7203/);
});

/** A concrete URL of a documented path (each parameter a short well-formed id), with a probe of the query. */
const urlOf = (path: string, query = '') => `${path.replace(/\{[^}]+\}/g, 'abc')}${query}`;

test('and the statuses are real: provoked on every operation, each answer is one it documents', async () => {
  const s = await h.seed('Probes');
  const headers = as(s.owner.session, s.workspaceId);
  // 429 on a credential past WSP_RATE_LIMIT_PER_MINUTE; 500 when the database is gone.
  const limited = await createTestApp({ config: { rateLimitPerMinute: 1 } });
  const ls = await limited.seed('Limited');
  const broken = await createTestApp();
  const bs = await broken.seed('Broken');
  await broken.database.db.destroy();
  const seen = new Map<string, Set<number>>();
  const saw = (key: string, status: number) => seen.set(key, (seen.get(key) ?? new Set()).add(status));
  try {
    await limited.app.inject({ method: 'GET', url: '/v1/me', headers: as(ls.owner.session) });
    for (const { path, method, op } of operations()) {
      if (OWN_ERROR_FORMAT.has(path)) continue;
      const key = `${method} ${path}`;
      const m = method.toUpperCase() as 'GET';
      saw(key, (await h.app.inject({ method: m, url: urlOf(path, '?wsp_probe=1'), headers })).statusCode);
      if (!isPublic(op)) {
        saw(key, (await h.app.inject({ method: m, url: urlOf(path) })).statusCode);
        saw(key, (await limited.app.inject({ method: m, url: urlOf(path), headers: as(ls.owner.session, ls.workspaceId) })).statusCode);
        saw(key, (await broken.app.inject({ method: m, url: urlOf(path), headers: as(bs.owner.session, bs.workspaceId) })).statusCode);
      }
      if (WRITES.has(method)) {
        const big = `{"x":"${'x'.repeat(1024 * 1024)}"}`;
        saw(key, (await h.app.inject({ method: m, url: urlOf(path), headers: { ...headers, 'content-type': 'application/json' }, payload: big })).statusCode);
        saw(key, (await h.app.inject({ method: m, url: urlOf(path), headers: { ...headers, 'content-type': 'text/plain' }, payload: 'x' })).statusCode);
      }
    }
  } finally {
    await limited.close();
    await broken.app.close();
  }
  const problems: string[] = [];
  for (const { path, method, op } of operations()) {
    for (const status of seen.get(`${method} ${path}`) ?? []) {
      if (status >= 400 && !op.responses[String(status)]) problems.push(`${method} ${path}: answered ${status}, not documented`);
    }
  }
  assert.deepEqual(problems, []);
  const all = new Set([...seen.values()].flatMap((x) => [...x]));
  for (const status of [401, 413, 415, 422, 429, 500]) assert.ok(all.has(status), `${status} was provoked`);
});

test('every operation has an operationId, unique, in camelCase, named by one rule or a chosen name', () => {
  const ops = Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.entries(item as Record<string, { operationId?: string }>).map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, id: op.operationId })),
  );
  const missing = ops.filter((o) => !o.id).map((o) => o.key);
  assert.deepEqual(missing, [], 'operations without an operationId');
  const ids = ops.map((o) => o.id!);
  assert.deepEqual(
    ids.filter((x, i) => ids.indexOf(x) !== i),
    [],
    'duplicate operationIds',
  );
  for (const o of ops) assert.match(o.id!, /^[a-z][A-Za-z0-9]*$/, o.key);
  const byKey = Object.fromEntries(ops.map((o) => [o.key, o.id]));
  assert.deepEqual(
    {
      list: byKey['GET /v1/dashboards/{id}/revisions'],
      get: byKey['GET /v1/dashboards/{id}/revisions/{revision_id}'],
      custom: byKey['POST /v1/dashboards/{id}/revisions/{revision_id}:restore'],
      create: byKey['POST /v1/secrets/{id}/versions'],
      update: byKey['PATCH /v1/installs/{id}'],
      remove: byKey['DELETE /v1/webhooks/{id}'],
      singleton: byKey['GET /v1/platform_metrics/{key}/series'],
      chosen: byKey['GET /v1/notifications/stream'],
    },
    {
      list: 'listDashboardRevisions',
      get: 'getDashboardRevision',
      custom: 'restoreDashboardRevision',
      create: 'createSecretVersion',
      update: 'updateInstall',
      remove: 'deleteWebhook',
      singleton: 'getPlatformMetricSeries',
      chosen: 'streamNotifications',
    },
  );
});

test('info: the licence, served where it links; the server is the public URL, or this one while that is the default', async () => {
  const info = doc.info as { license?: { name?: string; url?: string } };
  assert.equal(info.license?.name, 'Apache-2.0');
  assert.equal(info.license?.url, 'http://localhost:8080/license');
  // The served text is the Apache License 2.0, as package.json and the SDK's say.
  assert.match(fs.readFileSync('LICENSE', 'utf8'), /^\s*Apache License\s+Version 2\.0, January 2004\b/);
  for (const file of ['package.json', 'packages/sdk/package.json']) assert.equal((JSON.parse(fs.readFileSync(file, 'utf8')) as { license: string }).license, 'Apache-2.0', file);
  const licence = await h.app.inject({ method: 'GET', url: '/license' });
  assert.equal(licence.statusCode, 200);
  assert.match(licence.headers['content-type'] as string, /^text\/plain/);
  assert.equal(licence.body, fs.readFileSync('LICENSE', 'utf8'));
  assert.deepEqual(
    (doc as unknown as { servers: { url: string }[] }).servers.map((s) => s.url),
    ['/'],
  );

  const other = await createTestApp({ config: { publicUrl: 'https://wsp.acme.test' } });
  try {
    const served = (await other.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ servers: { url: string }[]; info: { license: { url: string } } }>();
    assert.deepEqual(
      served.servers.map((s) => s.url),
      ['https://wsp.acme.test'],
    );
    assert.equal(served.info.license.url, 'https://wsp.acme.test/license');
  } finally {
    await other.close();
  }
});
