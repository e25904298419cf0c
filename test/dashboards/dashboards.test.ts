import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { assert422, assertConforms, dashboardBody, dashboardsClient, metricWidget, reverseKeys, snippetWidget } from './fixtures.js';
import { Dashboard, DashboardList } from '../../src/dashboards/schemas/dashboard.js';
import { RevisionList } from '../../src/dashboards/schemas/revision.js';

let c: ReturnType<typeof dashboardsClient>;
const h = useTestApp({
  setup: async () => {
    c = dashboardsClient(h, s);
  },
});
const s = h.seeded;

async function created(body: object = dashboardBody()) {
  const res = await c.create(body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

async function revisionsOf(id: string) {
  const res = await c.revisions(id);
  assert.equal(res.statusCode, 200, res.body);
  assertConforms(RevisionList, res.json());
  return res.json().data as any[];
}

async function patched(d: { id: string; etag: string }, body: object) {
  const res = await c.patch(d.id, d.etag, body);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

describe('POST /v1/dashboards', () => {
  test('201 with the dashboard and its ETag; the first revision is manual, without parent or diff, by the caller', async () => {
    const body = dashboardBody();
    const res = await c.create(body);
    assert.equal(res.statusCode, 201);
    const d = res.json();
    assertConforms(Dashboard, d);
    assert.deepEqual(Object.keys(d).sort(), [
      'created_at',
      'current_revision_id',
      'default_filter_values',
      'description',
      'etag',
      'filter_definitions',
      'id',
      'name',
      'purpose',
      'updated_at',
      'widgets',
      'workspace_id',
    ]);
    assert.match(d.id, /^dash_[0-9a-z]{26}$/);
    assert.match(d.current_revision_id, /^drev_[0-9a-z]{26}$/);
    assert.equal(res.headers.etag, `"${d.etag}"`);
    assert.equal(d.created_at, Math.floor(h.clock.nowMs() / 1000));
    for (const k of ['name', 'description', 'purpose', 'filter_definitions', 'default_filter_values', 'widgets'] as const) assert.deepEqual(d[k], body[k], k);
    const [first, ...rest] = await revisionsOf(d.id);
    assert.equal(rest.length, 0);
    assert.equal(first.id, d.current_revision_id);
    assert.equal(first.dashboard_id, d.id);
    assert.equal(first.workspace_id, s.workspaceId);
    assert.equal(first.source, 'manual');
    assert.equal(first.parent_revision_id, null);
    assert.equal(first.restored_from_revision_id, null);
    assert.equal(first.structural_diff, null);
    assert.equal(first.summary, null);
    assert.equal(first.author_id, s.owner.userId);
    assert.deepEqual(first.snippet_etag_drift, []);
    assert.equal(first.created_at, d.created_at);
  });

  test('every kind of variable default comes back exactly as sent (a resource default as one string or as a list)', async () => {
    const variable = (key: string, input: Record<string, unknown>) => ({ kind: 'variable', key: `var.${key}`, input: { key, label: key, ...input } });
    const cluster = await c.call('POST', '/v1/clusters', { name: 'main', region: 'fsn1' });
    assert.equal(cluster.statusCode, 201, cluster.body);
    const filters = [
      variable('one', { kind: 'resource', resource: 'cluster', default: cluster.json().id }),
      variable('many', { kind: 'resource', resource: 'region', default: ['fsn1', 'nbg1'], multiple: true }),
      variable('range', { kind: 'time_range', default: { from: -60, to: 0 } }),
      variable('choice', { kind: 'enum', options: ['a', 'b'], default: 'b' }),
      variable('flag', { kind: 'boolean', default: false }),
      variable('count', { kind: 'number', min: 0.5, max: 9, default: 1 }),
      variable('note', { kind: 'text', default: '', max_length: 20 }),
    ];
    const created = await c.create(dashboardBody({ filter_definitions: filters }));
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().filter_definitions, filters);
    const [revision] = await revisionsOf(created.json().id);
    assert.deepEqual(revision.filter_definitions, filters);
  });

  test('a widget without widget_id gets a wdg_ id; description defaults to null', async () => {
    const body: Record<string, unknown> = dashboardBody({ widgets: [metricWidget(), metricWidget({ widget_id: 'mine' })] });
    delete body.description;
    const d = await created(body);
    assert.match(d.widgets[0].widget_id, /^wdg_[0-9a-z]{26}$/);
    assert.equal(d.widgets[1].widget_id, 'mine');
    assert.equal(d.description, null);
  });

  test('a workspace API token is the author of what it writes', async () => {
    const tc = dashboardsClient(h, s, s.apiToken);
    const d = (await tc.create(dashboardBody())).json();
    const p = (await tc.patch(d.id, d.etag, { name: 'By token' })).json();
    const revs = (await tc.revisions(p.id)).json().data;
    assert.deepEqual(
      revs.map((r: { author_id: string }) => r.author_id),
      [s.apiTokenId, s.apiTokenId],
    );
  });

  test('GET by canonical or bare id, with its ETag; list newest first, paged', async () => {
    const fresh = await h.seed('Lister');
    const fc = dashboardsClient(h, fresh);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await fc.create(dashboardBody({ name: `d${i}` }))).json().id);
    const got = await fc.get(ids[2]!.slice('dash_'.length));
    assert.equal(got.statusCode, 200);
    assert.equal(got.json().id, ids[2]);
    assert.equal(got.headers.etag, `"${got.json().etag}"`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await fc.call('GET', `/v1/dashboards?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assertConforms(DashboardList, res.json());
      seen.push(...res.json().data.map((d: { id: string }) => d.id));
      cursor = res.json().next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());
    for (const limit of ['0', '101']) assert422(await fc.call('GET', `/v1/dashboards?limit=${limit}`), ['query', 'limit']);
    assert.equal((await fc.call('GET', '/v1/dashboards?limit=100')).json().data.length, 5);
  });
});

describe('PATCH /v1/dashboards/{id}', () => {
  test('makes a revision with its summary, its parent and what changed; the dashboard shows it with a new etag', async () => {
    const d = await created();
    const p = await c.patch(d.id, d.etag, {
      name: 'Renamed',
      widgets: [metricWidget({ widget_id: 'wdg_machines', title: 'Running machines' }), metricWidget({ widget_id: 'extra', position: 2 })],
      summary: 'Show more',
    });
    assert.equal(p.statusCode, 200);
    const next = p.json();
    assertConforms(Dashboard, next);
    assert.equal(p.headers.etag, `"${next.etag}"`);
    assert.notEqual(next.etag, d.etag);
    assert.notEqual(next.current_revision_id, d.current_revision_id);
    assert.equal(next.name, 'Renamed');
    assert.equal(next.description, d.description);
    assert.deepEqual((await c.get(d.id)).json(), next);
    const [rev, first] = await revisionsOf(d.id);
    assert.equal(rev.id, next.current_revision_id);
    assert.equal(rev.parent_revision_id, first.id);
    assert.equal(rev.source, 'manual');
    assert.equal(rev.summary, 'Show more');
    assert.deepEqual(rev.structural_diff, {
      version: 1,
      dashboard_fields: ['name'],
      widgets: {
        added: { count: 1, widget_ids: ['extra'] },
        removed: { count: 0, widget_ids: [] },
        changed: { count: 1, widgets: [{ widget_id: 'wdg_machines', fields: ['title'] }] },
      },
    });
  });

  test('a PATCH that changes nothing makes no revision and keeps the etag (key order and summary do not count)', async () => {
    const d = await created();
    const reordered = reverseKeys(d.widgets);
    assert.notDeepEqual(Object.keys(reordered[0]), Object.keys(d.widgets[0]));
    for (const body of [{}, { summary: 'nothing' }, { name: d.name, description: d.description }, { widgets: reordered, default_filter_values: { 'var.tier': 'pro', time: { to: 0, from: -3600 } } }]) {
      const res = await c.patch(d.id, d.etag, body);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), d);
    }
    assert.equal((await revisionsOf(d.id)).length, 1);
    const two = await created(dashboardBody({ widgets: [metricWidget({ widget_id: 'a' }), metricWidget({ widget_id: 'b', position: 1 })] }));
    const swapped = await c.patch(two.id, two.etag, { widgets: [...two.widgets].reverse() });
    assert.deepEqual(swapped.json(), two, 'the order of the widgets array is not content: position is');
    assert.equal((await revisionsOf(two.id)).length, 1);
  });

  test('a stale If-Match is 409 with metadata.current_etag, also for a PATCH that changes nothing; * matches any', async () => {
    const d = await created();
    const next = await patched(d, { name: 'v2' });
    for (const body of [{ name: 'v3' }, {}]) {
      const res = await c.patch(d.id, d.etag, body);
      assert.equal(res.statusCode, 409);
      assert.equal(firstError(res.json()).code, 7030);
      assert.deepEqual(firstError(res.json()).metadata, { current_etag: next.etag });
    }
    const star = await c.call('PATCH', `/v1/dashboards/${d.id}`, { name: 'v4' }, { 'if-match': '*' });
    assert.equal(star.statusCode, 200);
    const bare = await c.call('PATCH', `/v1/dashboards/${d.id}`, { name: 'v5' }, { 'if-match': star.json().etag });
    assert.equal(bare.statusCode, 200);
    assert.equal((await revisionsOf(d.id)).length, 4);
  });

  test('description can be cleared with null; purpose and filters replace the old ones as a whole', async () => {
    const d = await created();
    const next = await patched(d, { description: null, purpose: 'workspace_overview', filter_definitions: [{ kind: 'time', key: 'time', label: 'When' }] });
    assert.equal(next.description, null);
    assert.equal(next.purpose, 'workspace_overview');
    assert.equal(next.filter_definitions.length, 1);
    const [rev] = await revisionsOf(d.id);
    assert.deepEqual(rev.structural_diff.dashboard_fields, ['description', 'purpose', 'filter_definitions']);
  });

  test('20 concurrent PATCHes with one If-Match: exactly one 200 and nineteen 409, and one new revision', async () => {
    const d = await created();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => c.patch(d.id, d.etag, { name: `writer ${i}` })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, ...Array(19).fill(409)]);
    const winner = results.find((r) => r.statusCode === 200)!.json();
    for (const r of results.filter((x) => x.statusCode === 409)) assert.equal(firstError(r.json()).metadata?.current_etag, winner.etag);
    const revs = await revisionsOf(d.id);
    assert.equal(revs.length, 2);
    assert.equal(revs[0].name, winner.name);
  });

  test('an unknown dashboard is 404 7002', async () => {
    const res = await c.patch('dash_' + '0'.repeat(26), 'x', { name: 'x' });
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7002);
  });
});

describe('snippet pins', () => {
  test('a new pin must name a snippet of the workspace: 404 at its snippet_id, checked before If-Match', async () => {
    const snp = (await c.createSnippet()).json();
    const ghost = { id: 'snp_' + '0'.repeat(26), etag: 'e' };
    const res = await c.create(dashboardBody({ widgets: [metricWidget(), snippetWidget(ghost)] }));
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json().errors, [{ code: 7002, message: 'The snippet does not exist', path: ['body', 'widgets', '1', 'snippet_id'] }]);
    const d = await created(dashboardBody({ widgets: [snippetWidget(snp)] }));
    const stale = await c.patch(d.id, 'stale', { widgets: [snippetWidget(ghost)] });
    assert.equal(stale.statusCode, 404);
  });

  test('a new pin must be at the current etag (409 7101 with current_etag) of an active snippet (409 7102), after If-Match', async () => {
    const snp = (await c.createSnippet()).json();
    const v2 = (await c.patchSnippet(snp.id, snp.etag, { source: 'select 2' })).json();
    const res = await c.create(dashboardBody({ widgets: [metricWidget(), snippetWidget(snp)] }));
    assert.equal(res.statusCode, 409);
    assert.deepEqual(res.json().errors, [{ code: 7101, message: res.json().errors[0].message, path: ['body', 'widgets', '1', 'snippet_etag'], metadata: { current_etag: v2.etag } }]);
    const archived = (await c.snippetAction(snp.id, 'archive', v2.etag)).json();
    const arch = await c.create(dashboardBody({ widgets: [snippetWidget(archived)] }));
    assert.equal(arch.statusCode, 409);
    assert.equal(firstError(arch.json()).code, 7102);
    assert.deepEqual(firstError(arch.json()).path, ['body', 'widgets', '0', 'snippet_id']);
    const d = await created();
    const staleDash = await c.patch(d.id, 'stale', { widgets: [snippetWidget(archived)] });
    assert.equal(firstError(staleDash.json()).code, 7030, 'If-Match comes before the state of the snippet');
  });

  test('a pin carried over unchanged stays, whatever became of its snippet; a bare snippet id is stored canonical', async () => {
    const snp = (await c.createSnippet()).json();
    const d = await created(dashboardBody({ widgets: [snippetWidget({ id: snp.id.slice(4), etag: snp.etag }, { widget_id: 'w' })] }));
    assert.equal(d.widgets[0].snippet_id, snp.id);
    await c.patchSnippet(snp.id, snp.etag, { name: 'changed since' });
    const next = await patched(d, { widgets: [snippetWidget({ id: snp.id.slice(4), etag: snp.etag }, { widget_id: 'w', title: 'Still here' })] });
    assert.equal(next.widgets[0].snippet_id, snp.id);
    const [rev] = await revisionsOf(d.id);
    assert.deepEqual(rev.structural_diff.widgets.changed.widgets, [{ widget_id: 'w', fields: ['title'] }]);
    const moved = await c.patch(next.id, next.etag, { widgets: [snippetWidget(snp, { widget_id: 'w2' })] });
    assert.equal(firstError(moved.json()).code, 7101, 'under another widget_id the pin is new');
  });

  test('repinning a widget to the current etag is a revision whose diff lists no field: snippet_etag is not one', async () => {
    const snp = (await c.createSnippet()).json();
    const d = await created(dashboardBody({ widgets: [snippetWidget(snp, { widget_id: 'w' })] }));
    const v2 = (await c.patchSnippet(snp.id, snp.etag, { source: 'select 3' })).json();
    const next = await patched(d, { widgets: [snippetWidget(v2, { widget_id: 'w' })] });
    assert.notEqual(next.current_revision_id, d.current_revision_id);
    const [rev] = await revisionsOf(d.id);
    assert.deepEqual(rev.structural_diff.widgets, {
      added: { count: 0, widget_ids: [] },
      removed: { count: 0, widget_ids: [] },
      changed: { count: 0, widgets: [] },
    });
    assert.deepEqual(rev.structural_diff.dashboard_fields, []);
    assert.equal(rev.widgets[0].snippet_etag, v2.etag);
  });
});

describe('DELETE /v1/dashboards/{id}', () => {
  test('204 with If-Match; the dashboard and its revisions are gone; a stale etag is 409 and deletes nothing', async () => {
    const d = await created();
    const next = await patched(d, { name: 'v2' });
    const stale = await c.remove(d.id, d.etag);
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).metadata?.current_etag, next.etag);
    assert.equal((await c.get(d.id)).statusCode, 200);
    const del = await c.remove(d.id, next.etag);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    for (const res of [await c.get(d.id), await c.revisions(d.id), await c.revision(d.id, d.current_revision_id), await c.remove(d.id, next.etag)]) {
      assert.equal(res.statusCode, 404);
      assert.equal(firstError(res.json()).code, 7002);
    }
    const left = await h.database.db.selectFrom('dashboard_revisions').select('id').where('dashboard_id', '=', d.id).execute();
    assert.deepEqual(left, []);
    assert422(await c.call('DELETE', `/v1/dashboards/${d.id}`), ['headers', 'if-match']);
  });
});
