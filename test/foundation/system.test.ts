import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/** docs/spec-gaps.md, "Conventions": the unauthenticated operational routes. */
const h = useTestApp();
const s = h.seeded;

test('/healthz answers 200 without a credential, and whatever credential is sent', async () => {
  for (const headers of [{}, { authorization: 'Bearer garbage' }, { authorization: 'Basic x' }]) {
    const res = await h.app.inject({ method: 'GET', url: '/healthz', headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
  }
});

test('/readyz answers 200 when the database answers (the 503 is in test/http/errors.test.ts)', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { status: 'ready' });
});

test('/metrics: Prometheus text with request counts and a latency histogram labelled by route pattern', async () => {
  for (let i = 0; i < 3; i++) await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(s.owner.session) });
  await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}`, headers: as(s.owner.session, s.workspaceId) });
  await h.app.inject({ method: 'GET', url: '/v1/me' });
  await h.app.inject({ method: 'GET', url: '/no/such/route/ws_12345' });
  const res = await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer garbage' } });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain/);
  const text = res.body;
  assert.match(text, /^wsp_http_requests_total\{method="GET",route="\/v1\/me",status="200"\} 3$/m);
  assert.match(text, /^wsp_http_requests_total\{method="GET",route="\/v1\/me",status="401"\} 1$/m);
  assert.match(text, /^wsp_http_requests_total\{method="GET",route="\/v1\/workspaces\/:id",status="200"\} 1$/m, 'the route pattern, not the URL');
  assert.match(text, /^wsp_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/v1\/me"\} 4$/m);
  assert.match(text, /^wsp_http_request_duration_seconds_count\{method="GET",route="\/v1\/me"\} 4$/m);
  assert.match(text, /route="unmatched"/);
  assert.ok(!text.includes(s.workspaceId), 'no ids in labels');
  assert.ok(!text.includes('ws_12345'), 'unmatched URLs are not labels');
  // The test app never warms its schemas: some wait, until warm() has compiled them all.
  const pending = () => Number(/^wsp_route_schemas_pending (\d+)$/m.exec(text)![1]);
  assert.ok(pending() > 0);
  await h.app.schemaCompilation.warm();
  const after = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(after, /^wsp_route_schemas_pending 0$/m);
});

test('/v1/openapi.json and /docs need no credential; /docs is an HTML page', async () => {
  const doc = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  assert.equal(doc.statusCode, 200);
  assert.match(String(doc.headers['content-type']), /^application\/json/);
  let res = await h.app.inject({ method: 'GET', url: '/docs' });
  for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops++) {
    const location = String(res.headers.location);
    res = await h.app.inject({ method: 'GET', url: location.startsWith('/') ? location : `/docs/${location.replace(/^\.\//, '')}` });
  }
  assert.equal(res.statusCode, 200, res.body.slice(0, 200));
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.body, /<html/i);
  assert.match(res.body, /<title>Workspace Platform API reference<\/title>/, 'the page says whose API it is');
  // Its assets are public too.
  const asset = await h.app.inject({ method: 'GET', url: '/docs/json' });
  assert.equal(asset.statusCode, 200);
  // The product's name in the top bar (a logo leading back to the console) and its colours.
  assert.match(res.body, /href="\/docs\/static\/theme\/workspace-platform\.css"/);
  const css = await h.app.inject({ method: 'GET', url: '/docs/static/theme/workspace-platform.css' });
  assert.match(css.body, /\.topbar/);
  const init = (await h.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })).body;
  const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(init)?.[1];
  assert.ok(logo, 'the logo is replaced');
  assert.match(Buffer.from(logo, 'base64').toString(), /Workspace Platform API/);
  assert.match(init, /img\.href = '\/console\/'/);
});
