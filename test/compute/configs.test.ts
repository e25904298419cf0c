import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait.js';
import { useComputeTestApp, CONFIG_BODY, createConfig } from './setup.js';
import { CATALOG_TTL_SECONDS } from '../../src/compute/catalog.js';

const t = useComputeTestApp();

const post = (payload: unknown, credential = t.s.apiToken) => t.h.app.inject({ method: 'POST', url: '/v1/compute/configs', headers: as(credential), payload: payload as object });

function paths(res: { json(): any }): string[][] {
  return res.json().errors.map((e: { path: string[] }) => e.path);
}

describe('POST /v1/compute/configs', () => {
  test('201 with exactly {id}; the record has every field, machine_type_filter defaults to * and secret_id to null', async () => {
    const { machine_type_filter: _, ...body } = CONFIG_BODY;
    const res = await post(body);
    assert.equal(res.statusCode, 201);
    assert.deepEqual(Object.keys(res.json()), ['id']);
    assert.match(res.json().id, /^cc_[0-9a-z]{26}$/);
    const got = await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs/${res.json().id}`, headers: as(t.s.owner.session, t.s.workspaceId) });
    assert.equal(got.statusCode, 200);
    const c = got.json();
    assert.deepEqual(Object.keys(c).sort(), ['created_at', 'etag', 'id', 'image', 'machine_type_filter', 'name', 'provider', 'region', 'secret_id', 'updated_at', 'workspace_id']);
    assert.equal(c.machine_type_filter, '*');
    assert.equal(c.secret_id, null);
    assert.equal(c.workspace_id, t.s.workspaceId);
    assert.equal(got.headers.etag, `"${c.etag}"`);
  });

  test('name, provider, region and image are required; name is 1-100 characters; no other properties', async () => {
    for (const field of ['name', 'provider', 'region', 'image']) {
      const { [field as keyof typeof CONFIG_BODY]: _, ...body } = CONFIG_BODY;
      const res = await post(body);
      assert.equal(res.statusCode, 422, field);
      assert.deepEqual(paths(res), [['body', field]]);
    }
    assert.equal((await post({ ...CONFIG_BODY, name: 'n'.repeat(100) })).statusCode, 201);
    for (const name of ['', 'n'.repeat(101), 7]) assert.deepEqual(paths(await post({ ...CONFIG_BODY, name })), [['body', 'name']]);
    for (const field of ['region', 'image']) assert.deepEqual(paths(await post({ ...CONFIG_BODY, [field]: '' })), [['body', field]]);
    assert.deepEqual(paths(await post({ ...CONFIG_BODY, size: 'xl' })), [['body', 'size']]);
  });

  test('provider has one allowed value: the configured provider id', async () => {
    const res = await post({ ...CONFIG_BODY, provider: 'aws' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['body', 'provider']);
    assert.match(firstError(res.json()).message, /hetzner/);
  });

  test("region must be one of the provider's locations; image one of its images (each 422 with its path, together)", async () => {
    const res = await post({ ...CONFIG_BODY, region: 'mars1', image: 'windows-95' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(paths(res), [
      ['body', 'region'],
      ['body', 'image'],
    ]);
    assert.match(res.json().errors[0].message, /fsn1, nbg1, hel1, ash/);
    assert.equal((await post({ ...CONFIG_BODY, region: 'hel1', image: 'debian-12' })).statusCode, 201);
  });

  test('machine_type_filter: a glob checked for syntax and matched against the server types offered in the region', async () => {
    for (const good of ['cx*', 'c?x11', 'cpx[12]1', 'c[!p]x*', 'cx2[0-9]', '*']) assert.equal((await post({ ...CONFIG_BODY, machine_type_filter: good })).statusCode, 201, good);
    for (const bad of ['cx[', 'cx]', 'c x*', 'cx/*', '[]', 'cx[z-a]', 'x'.repeat(101), '']) {
      const res = await post({ ...CONFIG_BODY, machine_type_filter: bad });
      assert.equal(res.statusCode, 422, bad);
      assert.deepEqual(paths(res), [['body', 'machine_type_filter']], bad);
    }
    const none = await post({ ...CONFIG_BODY, machine_type_filter: 'ccx*' });
    assert.equal(none.statusCode, 422);
    assert.deepEqual(paths(none), [['body', 'machine_type_filter']]);
    assert.match(firstError(none.json()).message, /matches none/);
    // cx types exist, but not in Ashburn; deprecated ones do not count.
    assert.deepEqual(paths(await post({ ...CONFIG_BODY, region: 'ash', machine_type_filter: 'cx*' })), [['body', 'machine_type_filter']]);
    assert.deepEqual(paths(await post({ ...CONFIG_BODY, machine_type_filter: 'cx11' })), [['body', 'machine_type_filter']]);
    assert.equal((await post({ ...CONFIG_BODY, region: 'ash', machine_type_filter: 'cpx*' })).statusCode, 201);
  });

  test('an unknown secret_id is 404 with path ["body","secret_id"]; a malformed one 422', async () => {
    const res = await post({ ...CONFIG_BODY, secret_id: 'sec_01jabcdefghjkmnpqrstvwxyz0' });
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7002);
    assert.deepEqual(firstError(res.json()).path, ['body', 'secret_id']);
    assert.deepEqual(paths(await post({ ...CONFIG_BODY, secret_id: 's'.repeat(55) })), [['body', 'secret_id']]);
  });

  test('the provider down, slow or rate limiting is 503 with Retry-After, never a 500', async () => {
    // A round asks for the three lists at once and answers at the first failure: the others may
    // reach the stub after the answer, and must not take the next round's one-shot fault.
    const roundEnded = (since: number) =>
      waitFor("the round's three requests at the stub", () => ['/locations', '/server_types', '/images'].every((p) => t.stub.requests.slice(since).some((r) => r.path === p)));
    t.h.clock.advanceSeconds(CATALOG_TTL_SECONDS + 1); // what the provider offers is asked again
    t.stub.fail({ path: /^\/locations$/, status: 503, code: 'unavailable' });
    let since = t.stub.requests.length;
    const down = await post(CONFIG_BODY);
    assert.equal(down.statusCode, 503);
    assert.equal(firstError(down.json()).code, 7404);
    assert.ok(Number(down.headers['retry-after']) >= 1);
    await roundEnded(since);

    t.stub.fail({ path: /^\/server_types$/, hang: true });
    since = t.stub.requests.length;
    const slow = await post(CONFIG_BODY);
    assert.equal(slow.statusCode, 503);
    assert.match(firstError(slow.json()).message, /within 2000 ms/);
    await roundEnded(since);

    t.stub.fail({ path: /^\/images$/, status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '30' } });
    const limited = await post(CONFIG_BODY);
    assert.equal(limited.statusCode, 503);
    assert.equal(limited.headers['retry-after'], '30');
    const sent = t.stub.requests.length;
    t.h.clock.advanceSeconds(10);
    const still = await post(CONFIG_BODY);
    assert.equal(still.headers['retry-after'], '20');
    assert.equal(t.stub.requests.length, sent, 'no request while the provider says wait');
    t.h.clock.advanceSeconds(20);
    assert.equal((await post(CONFIG_BODY)).statusCode, 201);
  });

  test('a member may create; a broad credential needs Service-Context (403)', async () => {
    assert.equal((await post(CONFIG_BODY, t.s.member.session)).statusCode, 403);
    const res = await t.h.app.inject({ method: 'POST', url: '/v1/compute/configs', headers: as(t.s.member.session, t.s.workspaceId), payload: CONFIG_BODY });
    assert.equal(res.statusCode, 201);
  });
});

describe('GET and DELETE /v1/compute/configs', () => {
  test("lists newest first with paging; another workspace's config is 404 (7002) on get and delete", async () => {
    const other = await t.h.seed('Other');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await createConfig(t, { ...CONFIG_BODY, name: `o${i}` }, other.apiToken));
    const page = (await t.h.app.inject({ method: 'GET', url: '/v1/compute/configs?limit=2', headers: as(other.apiToken) })).json();
    assert.deepEqual(
      page.data.map((c: { name: string }) => c.name),
      ['o2', 'o1'],
    );
    assert.equal(page.has_more, true);
    const rest = (await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs?limit=2&cursor=${page.next_cursor}`, headers: as(other.apiToken) })).json();
    assert.deepEqual(
      rest.data.map((c: { name: string }) => c.name),
      ['o0'],
    );
    assert.equal(rest.next_cursor, null);
    const foreignCursor = await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs?cursor=${page.next_cursor}`, headers: as(t.s.apiToken) });
    assert.equal(foreignCursor.statusCode, 422);

    const get = await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs/${ids[0]}`, headers: as(t.s.apiToken) });
    assert.equal(get.statusCode, 404);
    assert.equal(firstError(get.json()).code, 7002);
    const del = await t.h.app.inject({ method: 'DELETE', url: `/v1/compute/configs/${ids[0]}`, headers: as(t.s.apiToken, undefined, { 'if-match': '*' }) });
    assert.equal(del.statusCode, 404);
    assert.equal((await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs/${'x'.repeat(65)}`, headers: as(t.s.apiToken) })).statusCode, 422);
  });

  test('delete needs If-Match (422), refuses a stale etag (409 with current_etag), then 204; bare ids work', async () => {
    const id = await createConfig(t);
    const { etag } = (await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs/${id}`, headers: as(t.s.apiToken) })).json();
    const url = `/v1/compute/configs/${id.slice(3)}`;
    const missing = await t.h.app.inject({ method: 'DELETE', url, headers: as(t.s.apiToken) });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(firstError(missing.json()).path, ['headers', 'if-match']);
    const stale = await t.h.app.inject({ method: 'DELETE', url, headers: as(t.s.apiToken, undefined, { 'if-match': '"old"' }) });
    assert.equal(stale.statusCode, 409);
    assert.deepEqual(firstError(stale.json()).metadata, { current_etag: etag });
    const ok = await t.h.app.inject({ method: 'DELETE', url, headers: as(t.s.apiToken, undefined, { 'if-match': `"${etag}"` }) });
    assert.equal(ok.statusCode, 204);
    assert.equal((await t.h.app.inject({ method: 'GET', url, headers: as(t.s.apiToken) })).statusCode, 404);
  });
});
