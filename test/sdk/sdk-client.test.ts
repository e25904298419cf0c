import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useTestApp } from '../helpers/test-app.js';
import { createClient } from '@workspace-platform/sdk';

/** The SDK against a listening server: typed calls, credentials and Service-Context applied. */
let baseUrl: string;
const h = useTestApp({
  setup: async () => {
    baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
  },
});
const s = h.seeded;

test('a session with a workspace creates, lists and revokes a token', async () => {
  const api = createClient({ baseUrl: `${baseUrl}/`, token: s.owner.session, workspace: s.workspaceId });
  const created = await api.POST('/v1/api_tokens', { body: { name: 'sdk' } });
  assert.equal(created.response.status, 201);
  assert.ok(created.data);
  assert.match(created.data.token, /^sk_svc_/);
  const listed = await api.GET('/v1/api_tokens', { params: { query: { limit: 100 } } });
  assert.ok(listed.data?.data.some((t) => t.id === created.data.id));
  const revoked = await api.DELETE('/v1/api_tokens/{id}', { params: { path: { id: created.data.id } } });
  assert.equal(revoked.response.status, 204);
});

test('a baseUrl ending in /v1 (with or without a slash) reaches the same paths, not /v1/v1', async () => {
  for (const root of [`${baseUrl}/v1`, `${baseUrl}/v1/`]) {
    const api = createClient({ baseUrl: root, token: s.apiToken });
    const res = await api.GET('/v1/api_tokens', { params: { query: { limit: 1 } } });
    assert.equal(res.response.status, 200, root);
    assert.equal(new URL(res.response.url).pathname, '/v1/api_tokens');
  }
});

test('errors come back as the typed envelope', async () => {
  const api = createClient({ baseUrl, token: s.member.session, workspace: s.workspaceId });
  const res = await api.POST('/v1/api_tokens', { body: { name: 'nope' } });
  assert.equal(res.response.status, 403);
  assert.equal(res.data, undefined);
  assert.equal(res.error?.success, false);
  assert.equal(res.error?.errors[0]?.code, 7023);
});

test('the SDK is its own package: the server package exports nothing, the SDK has no server dependency', async () => {
  const root = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { exports?: unknown };
  assert.equal(root.exports, undefined);
  const sdk = JSON.parse(fs.readFileSync('packages/sdk/package.json', 'utf8')) as { name: string; dependencies: Record<string, string> };
  assert.equal(sdk.name, '@workspace-platform/sdk');
  assert.deepEqual(Object.keys(sdk.dependencies), ['openapi-fetch']);
  const me = await createClient({ baseUrl, token: s.owner.session }).GET('/v1/me');
  assert.equal(me.data?.user?.id, s.owner.userId);
});
