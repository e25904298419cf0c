import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { secretClient } from './secret-client.js';

let api: ReturnType<typeof secretClient>;
let stranger: ReturnType<typeof secretClient>;
const h = useTestApp({
  setup: async () => {
    const other = await h.seed('Other');
    api = secretClient(h, as(s.apiToken));
    stranger = secretClient(h, as(other.apiToken));
  },
});
const s = h.seeded;

describe('GET /v1/secrets?name=', () => {
  test('finds the one secret with exactly that name in the caller workspace', async () => {
    const wanted = await api.createSecret('Stripe key');
    await api.createSecret('stripe key');
    await api.createSecret('Stripe key 2');
    await stranger.createSecret('Stripe key');
    const res = await api.call('GET', `/secrets?name=${encodeURIComponent('Stripe key')}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [wanted], has_more: false, next_cursor: null });
    const none = await api.call('GET', '/secrets?name=nothing-like-it');
    assert.deepEqual(none.json(), { data: [], has_more: false, next_cursor: null });
  });

  test('names are 1-100 characters (422 at query.name); a cursor of the unfiltered list is refused with the filter', async () => {
    for (const name of ['', 'n'.repeat(101)]) {
      const res = await api.call('GET', `/secrets?name=${name}`);
      assert.equal(res.statusCode, 422, name);
      assert.deepEqual(firstError(res.json()).path, ['query', 'name']);
    }
    await api.createSecret();
    await api.createSecret();
    const page = (await api.call('GET', '/secrets?limit=1')).json();
    assert.ok(page.next_cursor);
    const mixed = await api.call('GET', `/secrets?name=x&cursor=${page.next_cursor}`);
    assert.equal(mixed.statusCode, 422, mixed.body);
    assert.deepEqual(firstError(mixed.json()).path, ['query', 'cursor']);
  });

  test('twenty concurrent creates of one name: one 201, nineteen 409 (7200), one secret listed', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => api.call('POST', '/secrets', { name: 'raced' })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, ...Array(19).fill(409)]);
    for (const r of results.filter((x) => x.statusCode === 409)) assert.equal(firstError(r.json()).code, 7200);
    assert.equal((await api.call('GET', '/secrets?name=raced')).json().data.length, 1);
  });
});

describe('the version id `latest`', () => {
  test('names the newest enabled version for GET and :access, following disables and enables', async () => {
    const secret = await api.createSecret();
    const v1 = await api.addVersion(secret.id, Buffer.from('one'));
    const v2 = await api.addVersion(secret.id, Buffer.from('two'));
    const latest = async () => (await api.call('GET', `/secrets/${secret.id}/versions/latest`)).json().id;
    const latestData = async () => {
      const res = await api.access(secret.id, 'latest');
      assert.equal(res.statusCode, 200, res.body);
      return { id: res.json().id, data: Buffer.from(res.json().data, 'base64').toString() };
    };
    assert.equal(await latest(), v2.id);
    assert.deepEqual(await latestData(), { id: v2.id, data: 'two' });
    const full = await api.call('GET', `/secrets/${secret.id}/versions/latest`);
    assert.equal(full.headers.etag, `"${v2.etag}"`);
    assert.equal(full.json().version_number, 2);

    assert.equal((await api.transition(secret.id, v2.id, 'disable', `"${v2.etag}"`)).statusCode, 200);
    assert.equal(await latest(), v1.id, 'a disabled version is passed over');
    assert.deepEqual(await latestData(), { id: v1.id, data: 'one' });
    const v3 = await api.addVersion(secret.id, Buffer.from('three'));
    assert.deepEqual(await latestData(), { id: v3.id, data: 'three' });
  });

  test('no enabled version: 404 at path.vid saying so; no secret: 404 at path.id; another workspace: 404', async () => {
    const secret = await api.createSecret();
    for (const url of [`/secrets/${secret.id}/versions/latest`, `/secrets/${secret.id}/versions/latest:access`]) {
      const empty = await api.call('GET', url);
      assert.equal(empty.statusCode, 404, url);
      assert.deepEqual(firstError(empty.json()).path, ['path', 'vid']);
      assert.match(firstError(empty.json()).message, /no enabled version/);
    }
    const v = await api.addVersion(secret.id, Buffer.from('x'));
    assert.equal((await api.transition(secret.id, v.id, 'destroy', `"${v.etag}"`)).statusCode, 200);
    assert.equal((await api.access(secret.id, 'latest')).statusCode, 404, 'a destroyed version is not `latest`');

    const missing = await api.call('GET', '/secrets/sec_nope/versions/latest');
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(firstError(missing.json()).path, ['path', 'id']);
    const theirs = await stranger.createSecret();
    await stranger.addVersion(theirs.id, Buffer.from('theirs'));
    const across = await api.access(theirs.id, 'latest');
    assert.equal(across.statusCode, 404);
    assert.deepEqual(firstError(across.json()).path, ['path', 'id']);
  });

  test('names no version for writes: :disable of `latest` is 404', async () => {
    const secret = await api.createSecret();
    await api.addVersion(secret.id, Buffer.from('x'));
    const res = await api.transition(secret.id, 'latest', 'disable', '"*"');
    assert.equal(res.statusCode, 404);
  });
});
