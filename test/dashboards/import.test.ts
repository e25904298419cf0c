import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { useTestApp } from '../helpers/test-app.js';
import { runAdmin } from '../../src/cli/admin.js';
import { importDashboard } from '../../src/dashboards/import.js';
import { AdminError } from '../../src/admin/service.js';
import { RevisionList } from '../../src/dashboards/schemas/revision.js';
import { assertConforms, dashboardsClient, metricWidget, snippetWidget } from './fixtures.js';

let c: ReturnType<typeof dashboardsClient>;
const h = useTestApp({
  setup: async () => {
    c = dashboardsClient(h, s);
  },
});
const s = h.seeded;

const revision = (created_at: number, fields: Record<string, unknown> = {}) => ({
  created_at,
  author_id: 'usr_legacy',
  name: 'Imported',
  purpose: 'custom',
  filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }],
  default_filter_values: {},
  widgets: [metricWidget({ widget_id: 'cpu' })],
  ...fields,
});

async function run(args: string[]) {
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks: string[] = [];
  const errors: string[] = [];
  out.on('data', (b) => chunks.push(String(b)));
  err.on('data', (b) => errors.push(String(b)));
  const code = await runAdmin(args, out, err, { ...h.dbEnv });
  return { code, stdout: chunks.join(''), stderr: errors.join('') };
}

describe('wsp admin dashboard import FILE', () => {
  test('brings in a dashboard with its history: backfill revisions, oldest first, chained with their diffs; the last is current', async () => {
    const snp = (await c.createSnippet()).json();
    const file = path.join(h.config.dataDir, 'history.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        workspace_id: s.workspaceId,
        revisions: [
          revision(1_600_000_000, { summary: 'first', description: 'old' }),
          revision(1_600_000_100, { name: 'Renamed', widgets: [metricWidget({ widget_id: 'cpu', col_span: 4 }), snippetWidget({ id: snp.id.slice(4), etag: snp.etag }, { widget_id: 'errors' })] }),
          revision(1_600_000_100, { name: 'Renamed', author_id: 'usr_other', widgets: [snippetWidget({ id: 'snp_gone', etag: 'e1' }, { widget_id: 'errors' })] }),
        ],
      }),
    );
    const res = await run(['dashboard', 'import', file, '--json']);
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.match(out.dashboard_id, /^dash_[0-9a-z]{26}$/);
    assert.equal(out.revisions, 3);

    const dashboard = (await c.get(out.dashboard_id)).json();
    assert.equal(dashboard.current_revision_id, out.current_revision_id);
    assert.equal(dashboard.created_at, 1_600_000_000);
    assert.equal(dashboard.updated_at, 1_600_000_100);
    assert.equal(dashboard.description, null);
    const page = (await c.revisions(out.dashboard_id)).json();
    assertConforms(RevisionList, page);
    const [third, second, first] = page.data;
    assert.deepEqual(
      page.data.map((r: { source: string }) => r.source),
      ['backfill', 'backfill', 'backfill'],
    );
    assert.equal(first.parent_revision_id, null);
    assert.equal(first.structural_diff, null);
    assert.equal(first.summary, 'first');
    assert.equal(first.description, 'old');
    assert.equal(second.parent_revision_id, first.id);
    assert.equal(third.parent_revision_id, second.id);
    assert.equal(third.author_id, 'usr_other');
    assert.deepEqual(second.structural_diff, {
      version: 1,
      dashboard_fields: ['name', 'description'],
      widgets: { added: { count: 1, widget_ids: ['errors'] }, removed: { count: 0, widget_ids: [] }, changed: { count: 1, widgets: [{ widget_id: 'cpu', fields: ['col_span'] }] } },
    });
    assert.deepEqual(third.structural_diff.widgets.removed.widget_ids, ['cpu']);
    assert.deepEqual(third.structural_diff.widgets.changed.widgets, [{ widget_id: 'errors', fields: ['snippet_id'] }]);
    assert.equal(second.widgets[1].snippet_id, snp.id, 'a snippet of the workspace is stored canonical');
    assert.deepEqual(third.snippet_etag_drift, [{ widget_id: 'errors', snippet_id: 'snp_gone', snapshot_etag: 'e1', current_etag: null, current_state: 'missing', restore_action: 'blocked' }]);
    // Imported history can be restored like any other.
    const restored = await c.restore(out.dashboard_id, first.id, dashboard.etag);
    assert.equal(restored.statusCode, 200, restored.body);
  });

  test('a file that breaks the schema is refused with every path, and nothing is written', async () => {
    const before = await h.database.db.selectFrom('dashboards').select('id').execute();
    const bad = { workspace_id: s.workspaceId, revisions: [revision(1, { widgets: [metricWidget({ col_span: 5 })] }), revision(2, { purpose: 'mine' })] };
    await assert.rejects(importDashboard(h.database.db, bad), (e: Error) => {
      assert.ok(e instanceof AdminError);
      assert.match(e.message, /revisions\.0\.widgets\.0\.widget_id is required/);
      assert.match(e.message, /revisions\.0\.widgets\.0\.col_span/);
      assert.match(e.message, /revisions\.1\.purpose/);
      return true;
    });
    await assert.rejects(importDashboard(h.database.db, { workspace_id: s.workspaceId, revisions: [] }), /revisions/);
    await assert.rejects(importDashboard(h.database.db, { workspace_id: s.workspaceId, revisions: [revision(5), revision(4)] }), /revisions\.1\.created_at is before/);
    await assert.rejects(
      importDashboard(h.database.db, { workspace_id: s.workspaceId, revisions: [revision(1, { widgets: [metricWidget({ widget_id: 'a' }), metricWidget({ widget_id: 'a' })] })] }),
      /revisions\.0\.widgets\.1\.widget_id/,
    );
    await assert.rejects(importDashboard(h.database.db, { workspace_id: 'ws_unknown', revisions: [revision(1)] }), /unknown workspace ws_unknown/);
    assert.deepEqual(await h.database.db.selectFrom('dashboards').select('id').execute(), before);
  });

  test('a missing FILE is a usage error (exit 2); an unreadable or non-JSON file exits 1 with the reason', async () => {
    assert.equal((await run(['dashboard', 'import'])).code, 2);
    const missing = await run(['dashboard', 'import', path.join(h.config.dataDir, 'nope.json')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read/);
    const garbage = path.join(h.config.dataDir, 'garbage.json');
    fs.writeFileSync(garbage, '{"workspace_id":');
    const notJson = await run(['dashboard', 'import', garbage]);
    assert.equal(notJson.code, 1);
    assert.match(notJson.stderr, /is not JSON/);
  });
});
