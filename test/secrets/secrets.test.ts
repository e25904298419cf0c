import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { as, firstError, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { secretClient } from './secret-client.js';

let other: Seed;
let api: ReturnType<typeof secretClient>;
let admin: ReturnType<typeof secretClient>;
let stranger: ReturnType<typeof secretClient>;
const h = useTestApp({
  setup: async () => {
    other = await h.seed('Other');
    api = secretClient(h, as(s.member.session, s.workspaceId));
    // Deleting a secret is an owner's or an admin's (docs/spec-gaps.md, "Roles (issue 50)").
    admin = secretClient(h, as(s.admin.session, s.workspaceId));
    stranger = secretClient(h, as(other.owner.session, other.workspaceId));
  },
});
const s = h.seeded;

describe('POST /v1/secrets', () => {
  test('201 with the secret and its ETag; any member or the API token may create', async () => {
    const res = await api.call('POST', '/secrets', { name: 'db-password' });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['created_at', 'etag', 'id', 'name', 'updated_at', 'workspace_id']);
    assert.match(body.id, /^sec_[0-9a-z]{26}$/);
    assert.equal(body.workspace_id, s.workspaceId);
    assert.equal(body.created_at, Math.floor(h.clock.nowMs() / 1000));
    assert.equal(res.headers.etag, `"${body.etag}"`);
    const viaToken = await secretClient(h, as(s.apiToken)).call('POST', '/secrets', { name: 'from-token' });
    assert.equal(viaToken.statusCode, 201);
  });

  test('name: 1-100 characters, required, no other properties (422 with the path)', async () => {
    assert.equal((await api.call('POST', '/secrets', { name: 'n'.repeat(100) })).statusCode, 201);
    for (const [body, path] of [
      [{ name: 'n'.repeat(101) }, ['body', 'name']],
      [{ name: '' }, ['body', 'name']],
      [{}, ['body', 'name']],
      [{ name: 7 }, ['body', 'name']],
      [{ name: 'x', labels: {} }, ['body', 'labels']],
    ] as const) {
      const res = await api.call('POST', '/secrets', body);
      assert.equal(res.statusCode, 422, JSON.stringify(body));
      assert.deepEqual(firstError(res.json()).path, path);
    }
  });

  test('a name is unique in its workspace (409 7200), not across workspaces', async () => {
    await api.createSecret('shared-name');
    const dup = await api.call('POST', '/secrets', { name: 'shared-name' });
    assert.equal(dup.statusCode, 409);
    assert.equal(firstError(dup.json()).code, 7200);
    assert.deepEqual(firstError(dup.json()).path, ['body', 'name']);
    await stranger.createSecret('shared-name');
  });
});

describe('GET /v1/secrets and /v1/secrets/{id}', () => {
  test('lists newest first, page by page, only the own workspace', async () => {
    const ws = await h.seed('Lister');
    const mine = secretClient(h, as(ws.apiToken));
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const n of names) await mine.createSecret(n);
    await stranger.createSecret(`not-listed-${randomBytes(2).toString('hex')}`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await mine.call('GET', `/secrets?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.has_more, body.next_cursor !== null);
      assert.ok(body.data.length <= 2);
      seen.push(...body.data.map((x: { name: string }) => x.name));
      cursor = body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...names].reverse());
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=nope!', 'extra=1']) {
      assert.equal((await mine.call('GET', `/secrets?${q}`)).statusCode, 422, q);
    }
  });

  test('a cursor of another list is 422 on query.cursor', async () => {
    const ws = await h.seed('Cursor');
    const mine = secretClient(h, as(ws.apiToken));
    for (let i = 0; i < 3; i++) await mine.createSecret();
    const page = (await mine.call('GET', '/secrets?limit=1')).json();
    const res = await api.call('GET', `/secrets?cursor=${page.next_cursor}`);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['query', 'cursor']);
  });

  test('get by canonical or bare id, with its ETag; another workspace and unknown ids are 404 7002', async () => {
    const secret = await api.createSecret();
    for (const id of [secret.id, secret.id.slice(4), secret.id.toUpperCase()]) {
      const res = await api.call('GET', `/secrets/${id}`);
      assert.equal(res.statusCode, 200, id);
      assert.deepEqual(res.json(), secret);
      assert.equal(res.headers.etag, `"${secret.etag}"`);
    }
    for (const res of [await stranger.call('GET', `/secrets/${secret.id}`), await api.call('GET', '/secrets/sec_00000000000000000000000000')]) {
      assert.equal(res.statusCode, 404);
      assert.equal(firstError(res.json()).code, 7002);
      assert.deepEqual(firstError(res.json()).path, ['path', 'id']);
    }
  });

  test('a secret id longer than 54 characters is 422 on path.id', async () => {
    const res = await api.call('GET', `/secrets/${'a'.repeat(55)}`);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['path', 'id']);
    assert.equal((await api.call('GET', `/secrets/${'a'.repeat(54)}`)).statusCode, 404);
  });

  test('a broad credential without Service-Context is 403; a bad credential 401', async () => {
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as(s.member.session) })).statusCode, 403);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as('nope') })).statusCode, 401);
  });
});

describe('DELETE /v1/secrets/{id}', () => {
  test('needs If-Match (422), refuses a stale one (409 with current_etag), then deletes with every version', async () => {
    const secret = await api.createSecret();
    const v = await api.addVersion(secret.id, Buffer.from('pw'));
    const missing = await admin.call('DELETE', `/secrets/${secret.id}`);
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(firstError(missing.json()).path, ['headers', 'if-match']);

    // Adding a version gave the secret a new etag: a delete based on the older read is stale.
    const current = (await api.call('GET', `/secrets/${secret.id}`)).json();
    assert.notEqual(current.etag, secret.etag);
    const stale = await admin.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': `"${secret.etag}"` });
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).code, 7030);
    assert.deepEqual(firstError(stale.json()).metadata, { current_etag: current.etag });

    const foreign = await stranger.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': '*' });
    assert.equal(foreign.statusCode, 404);
    assert.equal(firstError(foreign.json()).code, 7002);

    const del = await admin.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': `"${current.etag}"` });
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal((await api.call('GET', `/secrets/${secret.id}`)).statusCode, 404);
    assert.equal((await api.call('GET', `/secrets/${secret.id}/versions/${v.id}`)).statusCode, 404);
    const gone = await h.database.db.selectFrom('secret_versions').select('id').where('secret_id', '=', secret.id).execute();
    assert.deepEqual(gone, []);
    assert.equal((await admin.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': '*' })).statusCode, 404);
  });

  test('a version state change leaves the secret etag alone; If-Match * deletes whatever the etag; the name is free again', async () => {
    const secret = await api.createSecret('reused');
    const v = await api.addVersion(secret.id, Buffer.from('x'));
    const etag = (await api.call('GET', `/secrets/${secret.id}`)).json().etag;
    assert.equal((await api.transition(secret.id, v.id, 'disable', v.etag)).statusCode, 200);
    assert.equal((await api.call('GET', `/secrets/${secret.id}`)).json().etag, etag);
    assert.equal((await admin.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': '*' })).statusCode, 204);
    await api.createSecret('reused');
  });
});
