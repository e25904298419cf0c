import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { noneMatchHits } from '../../src/http/conditional-get.js';

/**
 * Conditional reads (issue 21): every JSON answer of a GET carries an ETag, and If-None-Match
 * naming it is 304 with no body; any change to what the caller would read, a new ETag and 200.
 */
const h = useTestApp();
const s = h.seeded;

const get = (url: string, headers: Record<string, string> = {}, credential = s.apiToken) => h.app.inject({ method: 'GET', url, headers: as(credential, undefined, headers) });

test('a list: an ETag on the 200; If-None-Match with it is 304 with no body; after a write, 200 with a new ETag', async () => {
  await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.apiToken), payload: { name: 'first' } });
  const first = await get('/v1/secrets');
  assert.equal(first.statusCode, 200);
  const etag = first.headers.etag as string;
  assert.match(etag, /^W\/"[A-Za-z0-9_-]{27}"$/);
  const same = await get('/v1/secrets', { 'if-none-match': etag });
  assert.equal(same.statusCode, 304);
  assert.equal(same.body, '');
  assert.equal(same.headers.etag, etag);
  assert.equal(same.headers['content-type'], undefined);
  assert.equal(same.headers['content-length'], undefined, 'a 304 claims no length');
  assert.equal((await get('/v1/secrets', { 'if-none-match': `"other", ${etag}` })).statusCode, 304, 'one of a list');
  assert.equal((await get('/v1/secrets', { 'if-none-match': etag.slice(2) })).statusCode, 304, 'compared weakly');

  await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.apiToken), payload: { name: 'second' } });
  const changed = await get('/v1/secrets', { 'if-none-match': etag });
  assert.equal(changed.statusCode, 200);
  assert.notEqual(changed.headers.etag, etag);
  assert.equal(changed.json().data.length, 2);
});

test('a resource answers with its own etag, quoted; If-None-Match with it is 304 until it changes', async () => {
  const made = (await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.apiToken), payload: { name: 'third' } })).json();
  const read = await get(`/v1/secrets/${made.id}`);
  assert.equal(read.headers.etag, `"${made.etag}"`);
  assert.equal((await get(`/v1/secrets/${made.id}`, { 'if-none-match': `"${made.etag}"` })).statusCode, 304);
  assert.equal((await get(`/v1/secrets/${made.id}`, { 'if-none-match': '*' })).statusCode, 304);
});

test('another caller never gets a 304 for a body it would not read: the tag is of the answer as it is for the caller', async () => {
  const other = await h.seed('Other');
  const mine = await get('/v1/secrets');
  const theirs = await get('/v1/secrets', { 'if-none-match': mine.headers.etag as string }, other.apiToken);
  assert.equal(theirs.statusCode, 200);
  assert.notEqual(theirs.headers.etag, mine.headers.etag);
});

test('only GETs of JSON: writes, errors and the document itself have no ETag of this kind', async () => {
  const write = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.apiToken, undefined, { 'if-none-match': '*' }), payload: { name: 'fourth' } });
  assert.equal(write.statusCode, 201);
  const missing = await get('/v1/secrets/sec_01jd0000000000000000000000', { 'if-none-match': '*' });
  assert.equal(missing.statusCode, 404, 'an error is never 304');
  const metrics = await h.app.inject({ method: 'GET', url: '/metrics', headers: { 'if-none-match': '*' } });
  assert.equal(metrics.statusCode, 200);
});

test('the document shows the 304 and If-None-Match on the GETs that answer JSON', async () => {
  const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  const list = doc.paths['/v1/secrets'].get;
  assert.ok(list.responses['304']);
  assert.ok(list.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-none-match'));
  assert.equal(doc.paths['/v1/secrets'].post.responses['304'], undefined);
  assert.equal(doc.paths['/metrics'].get.responses['304'], undefined, 'not JSON');
  assert.equal(doc.paths['/v1/installs/{id}/repository.git/info/refs'].get.responses['304'], undefined, 'git');
});

test('If-None-Match is compared as RFC 9110 says: weakly, in a list, or *', () => {
  assert.ok(noneMatchHits('"a"', 'W/"a"'));
  assert.ok(noneMatchHits('W/"a"', '"a"'));
  assert.ok(noneMatchHits(' "b" , W/"a"', '"a"'));
  assert.ok(noneMatchHits('*', '"a"'));
  assert.ok(!noneMatchHits('"ab"', '"a"'));
  assert.ok(!noneMatchHits('', '"a"'));
});
