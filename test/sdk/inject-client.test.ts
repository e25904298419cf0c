import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ifMatch, unwrap, WspError } from '@workspace-platform/sdk';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/** The tests' typed client (test/helpers/test-app.ts): the SDK over `app.inject`, answering as the server does. */
const h = useTestApp();
const s = h.seeded;

test('a read: the typed body, the status and the headers of the inject answer', async () => {
  const raw = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}`, headers: as(s.owner.session, s.workspaceId) });
  const { data, response } = await h.client(s.owner.session, s.workspaceId).GET('/v1/workspaces/{id}', { params: { path: { id: s.workspaceId } } });
  assert.equal(response.status, 200);
  assert.deepEqual(data, raw.json());
  assert.equal(response.headers.get('etag'), raw.headers.etag);
  assert.equal(response.headers.get('content-type'), raw.headers['content-type']);
});

test('a write with If-Match, a 304 with no body, and an error envelope as a WspError', async () => {
  const wsp = h.client(s.owner.session, s.workspaceId);
  const before = await unwrap(wsp.GET('/v1/workspaces/{id}', { params: { path: { id: s.workspaceId } } }));
  const after = await unwrap(wsp.PATCH('/v1/workspaces/{id}', { params: { path: { id: s.workspaceId }, header: ifMatch(before) }, body: { name: 'Renamed' } }));
  assert.equal(after.name, 'Renamed');
  assert.notEqual(after.etag, before.etag);

  const cached = await wsp.GET('/v1/workspaces/{id}', { params: { path: { id: s.workspaceId } }, headers: { 'if-none-match': `"${after.etag}"` } });
  assert.equal(cached.response.status, 304);
  assert.equal(cached.data, undefined);

  const stale = wsp.PATCH('/v1/workspaces/{id}', { params: { path: { id: s.workspaceId }, header: ifMatch(before) }, body: { name: 'Again' } });
  await assert.rejects(unwrap(stale), (err: unknown) => err instanceof WspError && err.status === 409 && err.code === 7030);
});

test('no credential: the 401 answered as the server does', async () => {
  const raw = await h.app.inject({ method: 'GET', url: '/v1/me' });
  const { error, response } = await h.client().GET('/v1/me');
  assert.equal(response.status, 401);
  assert.equal(raw.statusCode, 401);
  assert.deepEqual(error, raw.json());
});
