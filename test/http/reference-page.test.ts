import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { useTestApp } from '../helpers/test-app.js';

/**
 * The reference page (src/http/reference-page.ts) loads Swagger UI on the first request for it,
 * not at start; what it serves is tested in test/foundation/system.test.ts and the console's
 * browser tests.
 */
const h = useTestApp({ seed: false });

const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('@fastify/swagger-ui'));

test('Swagger UI is not loaded by a started server until /docs is asked for; then its page, assets and document answer', async () => {
  assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  assert.equal(loaded(), false, 'loaded at start');
  const page = await h.app.inject({ method: 'GET', url: '/docs/static/index.html' });
  assert.ok(loaded(), 'loaded by /docs');
  assert.ok(page.statusCode === 200 || (page.statusCode >= 300 && page.statusCode < 400), `${page.statusCode}`);
  const json = await h.app.inject({ method: 'GET', url: '/docs/json' });
  assert.equal(json.statusCode, 200);
  assert.deepEqual(json.json(), h.app.swagger(), 'the same document as /v1/openapi.json');
});

test("its assets answer HEAD without a body and If-None-Match with 304, under the server's own headers", async () => {
  const url = '/docs/static/swagger-ui.css';
  const full = await h.app.inject({ method: 'GET', url });
  assert.equal(full.statusCode, 200);
  assert.match(String(full.headers['content-type']), /^text\/css/);
  assert.ok(full.rawPayload.length > 10_000);
  assert.equal(Number(full.headers['content-length']), full.rawPayload.length);
  const head = await h.app.inject({ method: 'HEAD', url });
  assert.equal(head.statusCode, 200);
  assert.equal(head.rawPayload.length, 0);
  const etag = full.headers.etag;
  assert.ok(etag, 'an ETag');
  const again = await h.app.inject({ method: 'GET', url, headers: { 'if-none-match': String(etag) } });
  assert.equal(again.statusCode, 304);
  assert.equal(again.rawPayload.length, 0);
  // The pipeline's headers (request id, security headers) are on them as on every answer.
  assert.ok(full.headers['x-request-id']);
  const missing = await h.app.inject({ method: 'GET', url: '/docs/static/no-such-file.js' });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.json().success, false, 'in the envelope');
});
