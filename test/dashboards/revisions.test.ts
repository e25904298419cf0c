import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { statementsWhile } from '../helpers/statements.js';
import { firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { assertConforms, dashboardBody, dashboardsClient, metricWidget, snippetWidget } from './fixtures.js';
import { Dashboard } from '../../src/dashboards/schemas/dashboard.js';
import { DashboardRevision, RevisionList } from '../../src/dashboards/schemas/revision.js';
import { defaultOverviewLayout } from '../../src/dashboards/default-layout.js';

let c: ReturnType<typeof dashboardsClient>;
const h = useTestApp({
  setup: async () => {
    c = dashboardsClient(h, s);
  },
});
const s = h.seeded;

const ok = <T = any>(res: { statusCode: number; body: string; json(): any }, status = 200): T => {
  assert.equal(res.statusCode, status, res.body.slice(0, 500));
  return res.json();
};

async function history(id: string, query = '') {
  const page = ok(await c.revisions(id, query));
  assertConforms(RevisionList, page);
  return page as { data: any[]; has_more: boolean; next_cursor: string | null };
}

/** A dashboard with `n` revisions: names r0 (the first) ... r{n-1}. */
async function withRevisions(n: number) {
  let d = ok(await c.create(dashboardBody({ name: 'r0' })), 201);
  for (let i = 1; i < n; i++) d = ok(await c.patch(d.id, d.etag, { name: `r${i}` }));
  return d;
}

describe('GET /v1/dashboards/{id}/revisions', () => {
  test('newest first, 10 by default, with a cursor to the rest; has_more false exactly when next_cursor is null', async () => {
    const d = await withRevisions(13);
    const first = await history(d.id);
    assert.equal(first.data.length, 10);
    assert.deepEqual(
      first.data.map((r) => r.name),
      ['r12', 'r11', 'r10', 'r9', 'r8', 'r7', 'r6', 'r5', 'r4', 'r3'],
    );
    assert.equal(first.has_more, true);
    assert.match(first.next_cursor!, /^[A-Za-z0-9_-]+$/);
    const second = await history(d.id, `?cursor=${first.next_cursor}`);
    assert.deepEqual(
      second.data.map((r) => r.name),
      ['r2', 'r1', 'r0'],
    );
    assert.equal(second.has_more, false);
    assert.equal(second.next_cursor, null);
    for (let i = 0; i + 1 < first.data.length; i++) assert.equal(first.data[i].parent_revision_id, first.data[i + 1].id);
    const exact = await history(d.id, '?limit=3');
    assert.equal(exact.data.length, 3);
    const bare = await history(d.id.slice('dash_'.length), '?limit=1');
    assert.equal(bare.data[0].id, d.current_revision_id);
  });

  test("a cursor of another dashboard's list is 422 on query.cursor", async () => {
    const a = await withRevisions(3);
    const b = await withRevisions(1);
    const page = await history(a.id, '?limit=1');
    const res = await c.revisions(b.id, `?cursor=${page.next_cursor}`);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['query', 'cursor']);
  });

  test('GET one revision by canonical or bare id; a revision of another dashboard is 404', async () => {
    const a = await withRevisions(2);
    const b = await withRevisions(1);
    const rev = ok(await c.revision(a.id, a.current_revision_id.slice('drev_'.length)));
    assertConforms(DashboardRevision, rev);
    assert.equal(rev.id, a.current_revision_id);
    assert.equal(rev.name, 'r1');
    const other = await c.revision(b.id, a.current_revision_id);
    assert.equal(other.statusCode, 404);
    assert.equal(firstError(other.json()).code, 7002);
  });
});

describe('snippet_etag_drift, computed when read', () => {
  test('none while the pinned etag is current; then one item per snippet widget: none, reactivate, blocked', async () => {
    const [a, b, z] = [
      ok(await c.createSnippet({ name: 'a', source: 'a' }), 201),
      ok(await c.createSnippet({ name: 'b', source: 'b' }), 201),
      ok(await c.createSnippet({ name: 'z', source: 'z' }), 201),
    ];
    const d = ok(
      await c.create(
        dashboardBody({
          widgets: [snippetWidget(a, { widget_id: 'wa' }), snippetWidget(b, { widget_id: 'wb' }), snippetWidget(z, { widget_id: 'wz' }), metricWidget({ widget_id: 'm' })],
        }),
      ),
      201,
    );
    const clean = await history(d.id);
    assert.deepEqual(clean.data[0].snippet_etag_drift, []);

    const a2 = ok(await c.patchSnippet(a.id, a.etag, { source: 'a2' }));
    const b2 = ok(await c.snippetAction(b.id, 'archive', b.etag));
    assert.equal((await c.deleteSnippet(z.id, z.etag)).statusCode, 204);
    const [rev] = (await history(d.id)).data;
    assert.deepEqual(rev.snippet_etag_drift, [
      { widget_id: 'wa', snippet_id: a.id, snapshot_etag: a.etag, current_etag: a2.etag, current_state: 'active', restore_action: 'none' },
      { widget_id: 'wb', snippet_id: b.id, snapshot_etag: b.etag, current_etag: b2.etag, current_state: 'archived', restore_action: 'reactivate' },
      { widget_id: 'wz', snippet_id: z.id, snapshot_etag: z.etag, current_etag: null, current_state: 'missing', restore_action: 'blocked' },
    ]);
    assert.deepEqual(ok(await c.revision(d.id, rev.id)).snippet_etag_drift, rev.snippet_etag_drift);
  });

  test("another workspace's snippet of the same id never counts: a pin names the workspace's own snippets only", async () => {
    const snp = ok(await c.createSnippet(), 201);
    const d = ok(await c.create(dashboardBody({ widgets: [snippetWidget(snp, { widget_id: 'w' })] })), 201);
    const stranger = await h.seed('Stranger');
    const sc = dashboardsClient(h, stranger);
    const pinned = await sc.create(dashboardBody({ widgets: [snippetWidget(snp)] }));
    assert.equal(pinned.statusCode, 404);
    assert.deepEqual(firstError(pinned.json()).path, ['body', 'widgets', '0', 'snippet_id']);
    assert.deepEqual((await history(d.id)).data[0].snippet_etag_drift, []);
  });
});

describe('POST /v1/dashboards/{id}/revisions/{revision_id}:restore', () => {
  test('a new revision with the old content, source restore, restored_from_revision_id, its diff against the current one', async () => {
    const d = await withRevisions(1);
    const v2 = ok(await c.patch(d.id, d.etag, { name: 'v2', widgets: [metricWidget({ widget_id: 'other' })] }));
    const res = await c.restore(d.id, d.current_revision_id.slice('drev_'.length), v2.etag, { summary: 'Back to the first' });
    const restored = ok(res);
    assertConforms(Dashboard, restored);
    assert.equal(res.headers.etag, `"${restored.etag}"`);
    assert.notEqual(restored.etag, v2.etag);
    for (const k of ['name', 'description', 'purpose', 'filter_definitions', 'default_filter_values', 'widgets']) assert.deepEqual(restored[k], d[k], k);
    const [rev, parent] = (await history(d.id)).data;
    assert.equal(rev.id, restored.current_revision_id);
    assert.equal(rev.source, 'restore');
    assert.equal(rev.restored_from_revision_id, d.current_revision_id);
    assert.equal(rev.parent_revision_id, parent.id);
    assert.equal(rev.summary, 'Back to the first');
    assert.equal(rev.author_id, s.owner.userId);
    assert.deepEqual(rev.structural_diff, {
      version: 1,
      dashboard_fields: ['name'],
      widgets: { added: { count: 1, widget_ids: ['wdg_machines'] }, removed: { count: 1, widget_ids: ['other'] }, changed: { count: 0, widgets: [] } },
    });
    const noBody = ok(await c.restore(d.id, parent.id, restored.etag));
    assert.equal((await history(d.id)).data[0].summary, null);
    assert.equal(noBody.name, 'v2');
  });

  test('archived snippets it uses are made active again; the pins stay as they were, so drift shows the new etag', async () => {
    const snp = ok(await c.createSnippet(), 201);
    const d = ok(await c.create(dashboardBody({ widgets: [snippetWidget(snp, { widget_id: 'w' })] })), 201);
    const later = ok(await c.patch(d.id, d.etag, { widgets: [] }));
    const archived = ok(await c.snippetAction(snp.id, 'archive', snp.etag));
    const restored = ok(await c.restore(d.id, d.current_revision_id, later.etag));
    assert.deepEqual(restored.widgets, d.widgets);
    const now = ok(await c.snippet(snp.id));
    assert.equal(now.state, 'active');
    assert.notEqual(now.etag, archived.etag);
    assert.deepEqual((await history(d.id)).data[0].snippet_etag_drift, [
      { widget_id: 'w', snippet_id: snp.id, snapshot_etag: snp.etag, current_etag: now.etag, current_state: 'active', restore_action: 'none' },
    ]);
  });

  test('a deleted snippet blocks it: 409 7100 naming each widget and snippet; nothing changes', async () => {
    const [a, b] = [ok(await c.createSnippet({ name: 'a', source: 'a' }), 201), ok(await c.createSnippet({ name: 'b', source: 'b' }), 201)];
    const d = ok(await c.create(dashboardBody({ widgets: [snippetWidget(a, { widget_id: 'wa' }), snippetWidget(b, { widget_id: 'wb' })] })), 201);
    const later = ok(await c.patch(d.id, d.etag, { widgets: [] }));
    const archivedB = ok(await c.snippetAction(b.id, 'archive', b.etag));
    assert.equal((await c.deleteSnippet(a.id, a.etag)).statusCode, 204);
    const res = await c.restore(d.id, d.current_revision_id, later.etag);
    assert.equal(res.statusCode, 409);
    const errors = res.json().errors as { code: number; metadata: Record<string, string> }[];
    assert.deepEqual(
      errors.map((e) => [e.code, e.metadata]),
      [[7100, { widget_id: 'wa', snippet_id: a.id }]],
    );
    assert.deepEqual(ok(await c.get(d.id)), later);
    assert.equal(ok(await c.snippet(b.id)).etag, archivedB.etag, 'the archived snippet was not reactivated by a refused restore');
  });

  test('If-Match is the dashboard’s: stale is 409 7030; a revision of another dashboard, or unknown, is 404', async () => {
    const a = await withRevisions(2);
    const b = await withRevisions(1);
    const stale = await c.restore(a.id, a.current_revision_id, 'stale');
    assert.equal(stale.statusCode, 409);
    assert.deepEqual(firstError(stale.json()).metadata, { current_etag: a.etag });
    for (const res of [
      await c.restore(b.id, a.current_revision_id, b.etag),
      await c.restore(a.id, 'drev_' + '0'.repeat(26), a.etag),
      await c.restore('dash_' + '0'.repeat(26), a.current_revision_id, a.etag),
    ]) {
      assert.equal(res.statusCode, 404);
      assert.equal(firstError(res.json()).code, 7002);
    }
    const unknownWithStale = await c.restore(a.id, 'drev_' + '0'.repeat(26), 'stale');
    assert.equal(unknownWithStale.statusCode, 404, 'existence comes before If-Match');
  });
});

test('20 concurrent restores and resets with one If-Match: exactly one 200, nineteen 409, one new revision', async () => {
  const d = ok(await c.create(dashboardBody({ purpose: 'workspace_overview' })), 201);
  const v2 = ok(await c.patch(d.id, d.etag, { name: 'v2' }));
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? c.restore(d.id, d.current_revision_id, v2.etag) : c.reset(d.id, v2.etag))));
  assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, ...Array(19).fill(409)]);
  assert.equal((await history(d.id)).data.length, 3);
});

describe('POST /v1/dashboards/{id}:reset', () => {
  test('a workspace_overview dashboard gets the built-in layout back (source reset); name and description stay; again changes nothing', async () => {
    const d = ok(await c.create(dashboardBody({ purpose: 'workspace_overview', name: 'Overview' })), 201);
    const res = await c.reset(d.id.slice('dash_'.length), d.etag, { summary: 'Start over' });
    const reset = ok(res);
    assertConforms(Dashboard, reset);
    const layout = defaultOverviewLayout();
    assert.deepEqual(reset.filter_definitions, layout.filter_definitions);
    assert.deepEqual(reset.default_filter_values, layout.default_filter_values);
    assert.deepEqual(reset.widgets, layout.widgets);
    assert.equal(reset.name, 'Overview');
    assert.equal(reset.description, d.description);
    const [rev, parent] = (await history(d.id)).data;
    assert.equal(rev.source, 'reset');
    assert.equal(rev.summary, 'Start over');
    assert.equal(rev.parent_revision_id, parent.id);
    assert.equal(rev.restored_from_revision_id, null);
    assert.deepEqual(rev.structural_diff.dashboard_fields, ['filter_definitions', 'default_filter_values']);
    assert.deepEqual(
      rev.structural_diff.widgets.added.widget_ids,
      layout.widgets.map((w) => w.widget_id),
    );
    assert.deepEqual(rev.structural_diff.widgets.removed.widget_ids, ['wdg_machines']);
    const again = ok(await c.reset(d.id, reset.etag));
    const [second] = (await history(d.id)).data;
    assert.equal(second.id, again.current_revision_id);
    assert.deepEqual(second.structural_diff.dashboard_fields, []);
    assert.equal(second.structural_diff.widgets.changed.count + second.structural_diff.widgets.added.count + second.structural_diff.widgets.removed.count, 0);
  });

  test('any other purpose is 409 7103; a stale etag is 409 7030 first; unknown 404', async () => {
    const d = ok(await c.create(dashboardBody({ purpose: 'custom' })), 201);
    const res = await c.reset(d.id, d.etag);
    assert.equal(res.statusCode, 409);
    assert.equal(firstError(res.json()).code, 7103);
    assert.equal(firstError((await c.reset(d.id, 'stale')).json()).code, 7030);
    assert.equal((await c.reset('dash_' + '0'.repeat(26), d.etag)).statusCode, 404);
    assert.equal((await history(d.id)).data.length, 1);
  });
});

describe('revisions are immutable, in the database too', () => {
  test('UPDATE of a revision row is refused; DELETE too while its dashboard exists', async () => {
    const d = await withRevisions(2);
    const db = h.database.db;
    await assert.rejects(db.updateTable('dashboard_revisions').set({ name: 'rewritten' }).where('id', '=', d.current_revision_id).execute(), /immutable/);
    await assert.rejects(db.updateTable('dashboard_revisions').set({ summary: 'x' }).where('dashboard_id', '=', d.id).execute(), /immutable/);
    await assert.rejects(db.deleteFrom('dashboard_revisions').where('id', '=', d.current_revision_id).execute(), /only with their dashboard/);
    if (h.database.engine === 'postgres') await assert.rejects(sql`truncate dashboard_revisions`.execute(db), /only with their dashboard/);
    assert.equal((await history(d.id)).data[0].name, 'r1');
    assert.equal((await history(d.id)).data.length, 2);
  });
});

describe('a page of revisions kept by its versions (migration 0020, src/http/list-cache.ts)', () => {
  const statements = <T>(fn: () => Promise<T>) => statementsWhile(h.database.db, fn);

  test('read again at the same versions: the same bytes and ETag, no revision or snippet read; If-None-Match is 304', async () => {
    const snp = ok(await c.createSnippet(), 201);
    const d = ok(await c.create(dashboardBody({ widgets: [snippetWidget(snp, { widget_id: 'w' })] })), 201);
    const first = await c.revisions(d.id);
    assert.equal(first.statusCode, 200);
    const again = await statements(() => c.revisions(d.id));
    assert.deepEqual([again.result.statusCode, again.result.body, again.result.headers.etag], [200, first.body, first.headers.etag]);
    assert.deepEqual(
      again.sql.filter((q) => /from "(dashboard_revisions|snippets|dashboards)"/.test(q)),
      [],
      again.sql.join('\n'),
    );
    assert.equal((await c.revisions(d.id, '', { 'if-none-match': first.headers.etag as string })).statusCode, 304);
  });

  test('every change of what a page shows is read again, through the API or by SQL (revisions are immutable): a new revision, a snippet, the dashboard deleted', async () => {
    const snp = ok(await c.createSnippet(), 201);
    let d = ok(await c.create(dashboardBody({ name: 'one', widgets: [snippetWidget(snp, { widget_id: 'w' })] })), 201);
    const names = async () => (await history(d.id)).data.map((r) => r.name);
    assert.deepEqual(await names(), ['one']);
    d = ok(await c.patch(d.id, d.etag, { name: 'two' }));
    assert.deepEqual(await names(), ['two', 'one'], 'a new revision');
    await h.database.db.updateTable('snippets').set({ etag: 'changed-by-sql' }).where('id', '=', snp.id).execute();
    assert.equal((await history(d.id)).data[0].snippet_etag_drift[0]?.current_etag, 'changed-by-sql', 'a snippet changed by SQL');
    await h.database.db.deleteFrom('dashboards').where('id', '=', d.id).execute();
    const gone = await c.revisions(d.id);
    assert.equal(gone.statusCode, 404, 'the dashboard deleted by SQL');
  });

  test("another workspace asking for this dashboard's revisions gets 404, whatever this workspace's reads kept", async () => {
    const d = ok(await c.create(dashboardBody({ name: 'mine' })), 201);
    assert.equal((await c.revisions(d.id)).statusCode, 200);
    assert.equal((await c.revisions(d.id)).statusCode, 200);
    const stranger = await h.seed('Revisions elsewhere');
    const theirs = await dashboardsClient(h, stranger).revisions(d.id);
    assert.equal(theirs.statusCode, 404, theirs.body);
  });
});
