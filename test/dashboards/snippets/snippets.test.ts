import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { firstError } from '../../helpers/harness.js';
import { useTestApp } from '../../helpers/test-app.js';
import { assert422, assertConforms, dashboardsClient } from '../fixtures.js';
import { Snippet, SnippetList } from '../../../src/dashboards/snippets/schemas.js';

let c: ReturnType<typeof dashboardsClient>;
const h = useTestApp({
  setup: async () => {
    c = dashboardsClient(h, s);
  },
});
const s = h.seeded;

const make = async (body: object = { name: 'Errors', source: 'select 1' }) => {
  const res = await c.createSnippet(body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
};

describe('POST, GET and list', () => {
  test('creates an active snippet: 201 with the ETag header, display_type null unless given', async () => {
    const res = await c.createSnippet({ name: 'Errors', source: 'select count(*) from errors' });
    assert.equal(res.statusCode, 201);
    const snp = res.json();
    assertConforms(Snippet, snp);
    assert.deepEqual(Object.keys(snp).sort(), ['created_at', 'display_type', 'etag', 'id', 'name', 'source', 'state', 'updated_at', 'workspace_id']);
    assert.match(snp.id, /^snp_[0-9a-z]{26}$/);
    assert.equal(snp.workspace_id, s.workspaceId);
    assert.equal(snp.state, 'active');
    assert.equal(snp.display_type, null);
    assert.equal(res.headers.etag, `"${snp.etag}"`);
    assert.equal((await make({ name: 'T', source: 's', display_type: 'timeseries' })).display_type, 'timeseries');
  });

  test('name 1-100, source 1-65536, display_type of the five or null, nothing else', async () => {
    assert.equal((await c.createSnippet({ name: 'n'.repeat(100), source: 's'.repeat(65536) })).statusCode, 201);
    assert422(await c.createSnippet({ name: 'n'.repeat(101), source: 's' }), ['body', 'name']);
    assert422(await c.createSnippet({ name: '', source: 's' }), ['body', 'name']);
    assert422(await c.createSnippet({ name: 'n', source: '' }), ['body', 'source']);
    assert422(await c.createSnippet({ name: 'n', source: 's'.repeat(65537) }), ['body', 'source']);
    assert422(await c.createSnippet({ name: 'n' }), ['body', 'source']);
    assert422(await c.createSnippet({ name: 'n', source: 's', display_type: 'chart' }), ['body', 'display_type']);
    assert422(await c.createSnippet({ name: 'n', source: 's', state: 'archived' }), ['body', 'state']);
  });

  test('GET by canonical or bare id; unknown 404 7002; an id over 54 characters 422', async () => {
    const snp = await make();
    const got = await c.snippet(snp.id.slice(4));
    assert.equal(got.statusCode, 200);
    assert.deepEqual(got.json(), snp);
    assert.equal(got.headers.etag, `"${snp.etag}"`);
    const unknown = await c.snippet('snp_' + '0'.repeat(26));
    assert.equal(unknown.statusCode, 404);
    assert.equal(firstError(unknown.json()).code, 7002);
    assert.equal((await c.snippet('x'.repeat(54))).statusCode, 404);
    assert422(await c.snippet('x'.repeat(55)), ['path', 'id']);
  });

  test('lists newest first, active and archived, a page at a time', async () => {
    const other = await h.seed('Lister');
    const oc = dashboardsClient(h, other);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await oc.createSnippet({ name: `s${i}`, source: 'x' })).json().id);
    const first = (await oc.call('GET', `/v1/snippets/${made[1]}`)).json();
    await oc.snippetAction(first.id, 'archive', first.etag);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await oc.call('GET', `/v1/snippets?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200);
      assertConforms(SnippetList, res.json());
      seen.push(...res.json().data.map((x: { id: string }) => x.id));
      cursor = res.json().next_cursor;
      assert.equal(res.json().has_more, cursor !== null);
    } while (cursor);
    assert.deepEqual(seen, [...made].reverse());
    assert422(await oc.call('GET', '/v1/snippets?limit=101'), ['query', 'limit']);
  });
});

describe('PATCH, archive, unarchive, DELETE', () => {
  test('PATCH with If-Match gives a new etag; a PATCH that changes nothing keeps it', async () => {
    const snp = await make();
    const res = await c.patchSnippet(snp.id, snp.etag, { source: 'select 2', display_type: 'stat' });
    assert.equal(res.statusCode, 200);
    const changed = res.json();
    assert.equal(changed.source, 'select 2');
    assert.equal(changed.display_type, 'stat');
    assert.equal(changed.name, snp.name);
    assert.notEqual(changed.etag, snp.etag);
    assert.equal(res.headers.etag, `"${changed.etag}"`);
    assert.deepEqual((await c.snippet(snp.id)).json(), changed);
    const same = await c.patchSnippet(snp.id, changed.etag, { source: 'select 2' });
    assert.equal(same.json().etag, changed.etag);
    const cleared = await c.patchSnippet(snp.id, changed.etag, { display_type: null });
    assert.equal(cleared.json().display_type, null);
  });

  test('a stale If-Match is 409 with metadata.current_etag, even for a PATCH that would change nothing; * matches', async () => {
    const snp = await make();
    const next = (await c.patchSnippet(snp.id, snp.etag, { name: 'Renamed' })).json();
    for (const body of [{ name: 'Again' }, { name: 'Renamed' }]) {
      const res = await c.patchSnippet(snp.id, snp.etag, body);
      assert.equal(res.statusCode, 409);
      assert.equal(firstError(res.json()).code, 7030);
      assert.deepEqual(firstError(res.json()).metadata, { current_etag: next.etag });
    }
    const star = await c.call('PATCH', `/v1/snippets/${snp.id}`, { name: 'Star' }, { 'if-match': '*' });
    assert.equal(star.statusCode, 200);
    assert422(await c.call('PATCH', `/v1/snippets/${snp.id}`, { name: 'x' }), ['headers', 'if-match']);
    assert422(await c.patchSnippet(snp.id, snp.etag, { name: '' }), ['body', 'name']);
  });

  test('archive and unarchive change the state and the etag; repeating either changes nothing', async () => {
    const snp = await make();
    const archived = (await c.snippetAction(snp.id, 'archive', snp.etag)).json();
    assert.equal(archived.state, 'archived');
    assert.notEqual(archived.etag, snp.etag);
    const again = await c.snippetAction(snp.id, 'archive', archived.etag);
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().etag, archived.etag);
    const stale = await c.snippetAction(snp.id, 'unarchive', snp.etag);
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).metadata?.current_etag, archived.etag);
    const active = (await c.snippetAction(snp.id, 'unarchive', archived.etag)).json();
    assert.equal(active.state, 'active');
    assert.notEqual(active.etag, archived.etag);
    assert.equal((await c.snippetAction(snp.id, 'unarchive', active.etag)).json().etag, active.etag);
    assert422(await c.call('POST', `/v1/snippets/${snp.id}:archive`), ['headers', 'if-match']);
  });

  test('DELETE with If-Match: 204, then 404; a stale etag is 409 and deletes nothing', async () => {
    const snp = await make();
    const changed = (await c.patchSnippet(snp.id, snp.etag, { name: 'v2' })).json();
    const stale = await c.deleteSnippet(snp.id, snp.etag);
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).metadata?.current_etag, changed.etag);
    assert.equal((await c.snippet(snp.id)).statusCode, 200);
    const del = await c.deleteSnippet(snp.id, changed.etag);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal((await c.snippet(snp.id)).statusCode, 404);
    assert.equal((await c.deleteSnippet(snp.id, changed.etag)).statusCode, 404);
    assert.equal((await c.patchSnippet(snp.id, changed.etag, { name: 'x' })).statusCode, 404);
  });

  test('20 concurrent PATCHes with one If-Match: exactly one 200, nineteen 409', async () => {
    const snp = await make();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => c.patchSnippet(snp.id, snp.etag, { name: `writer ${i}` })));
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [200, ...Array(19).fill(409)]);
    const winner = results.find((r) => r.statusCode === 200)!.json();
    assert.deepEqual((await c.snippet(snp.id)).json(), winner);
    for (const r of results.filter((x) => x.statusCode === 409)) assert.equal(firstError(r.json()).metadata?.current_etag, winner.etag);
  });

  test('20 concurrent archives with one If-Match: exactly one 200', async () => {
    const snp = await make();
    const results = await Promise.all(Array.from({ length: 20 }, () => c.snippetAction(snp.id, 'archive', snp.etag)));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, ...Array(19).fill(409)]);
  });
});

test("another workspace's snippet is 404 (7002) on every route, and is left as it was", async () => {
  const snp = await make();
  const stranger = await h.seed('Stranger');
  const sc = dashboardsClient(h, stranger, stranger.apiToken);
  for (const res of [
    await sc.snippet(snp.id),
    await sc.patchSnippet(snp.id, snp.etag, { name: 'mine' }),
    await sc.snippetAction(snp.id, 'archive', snp.etag),
    await sc.snippetAction(snp.id, 'unarchive', snp.etag),
    await sc.deleteSnippet(snp.id, snp.etag),
  ]) {
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(firstError(res.json()).code, 7002);
  }
  assert.ok(!(await sc.call('GET', '/v1/snippets')).body.includes(snp.id));
  assert.deepEqual((await c.snippet(snp.id)).json(), snp);
});
