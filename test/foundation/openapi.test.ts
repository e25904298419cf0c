import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/harness.js';

/**
 * The OpenAPI document (CONTRACT §8): 3.1, version 1.0.0, HTTP bearer security, and every
 * authenticated /v1 operation documents its 401 and 422, each error response being the one
 * shared ErrorEnvelope component.
 */
interface Operation {
  security?: Record<string, string[]>[];
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
let h: TestApp;
let doc: Doc;
before(async () => {
  h = await createTestApp();
  const res = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  doc = res.json();
});
after(() => h.close());

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

test('an HTTP bearer security scheme, required by default', () => {
  const schemes = Object.entries(doc.components.securitySchemes).filter(([, s]) => s.type === 'http' && s.scheme?.toLowerCase() === 'bearer');
  assert.equal(schemes.length, 1);
  const name = schemes[0]![0];
  assert.deepEqual(doc.security, [{ [name]: [] }]);
  for (const { path, method, op } of authenticated()) {
    if (op.security) assert.ok(op.security.some((r) => name in r), `${method} ${path} names another scheme`);
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
      ['/healthz', '/readyz', '/metrics'].includes(path) || path.startsWith('/v1/oauth/') || path.startsWith('/.well-known/') || path === '/device',
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
