import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { dashboardBody, dashboardsClient } from '../dashboards/fixtures.js';
import { logInTo, removeTempConfigDirs, runCli } from './cli-harness.js';

/** `wsp dashboards revisions` follows the pages (10 at most each, as the spec bounds them). */
let configDir: string;
const h = useTestApp({
  setup: async () => {
    configDir = await logInTo(h, s, 'member');
  },
  teardown: async () => {
    removeTempConfigDirs();
  },
});
const s = h.seeded;

test('one page of revisions by default, every one with --all; a table for people', async () => {
  const c = dashboardsClient(h, s);
  let dashboard = (await c.create(dashboardBody({ name: 'r0' }))).json();
  for (let i = 1; i <= 11; i++) {
    const res = await c.patch(dashboard.id, dashboard.etag, { name: `r${i}`, summary: `rename ${i}` });
    assert.equal(res.statusCode, 200, res.body);
    dashboard = res.json();
  }
  const page = JSON.parse((await runCli(['dashboards', 'revisions', dashboard.id, '--json'], { configDir })).stdout);
  assert.equal(page.data.length, 10, 'the API page size');
  assert.equal(page.has_more, true);
  assert.equal(JSON.parse((await runCli(['dashboards', 'revisions', dashboard.id, '--limit', '3', '--json'], { configDir })).stdout).data.length, 3);

  const run = await runCli(['dashboards', 'revisions', dashboard.id, '--all', '--limit', '5', '--json'], { configDir });
  assert.equal(run.code, 0, run.stderr);
  const all = JSON.parse(run.stdout);
  assert.equal(all.has_more, false);
  assert.equal(all.next_cursor, null);
  const revisions = all.data as { id: string; name: string; source: string }[];
  assert.equal(revisions.length, 12);
  assert.deepEqual(
    revisions.map((r) => r.name),
    Array.from({ length: 12 }, (_, i) => `r${11 - i}`),
  );
  assert.equal(revisions[0]!.id, dashboard.current_revision_id);

  const table = await runCli(['dashboards', 'revisions', dashboard.id], { configDir });
  assert.match(table.stdout, /^ID +SOURCE +CREATED +AUTHOR +RESTORED FROM +SUMMARY$/m);
  assert.match(table.stdout, /manual .* rename 11$/m);
  assert.match(table.stderr, /^Showing the first 10: add --all for every one, or a larger --limit\.$/m);
  assert.doesNotMatch((await runCli(['dashboards', 'revisions', dashboard.id, '--all'], { configDir })).stderr, /Showing/);

  const missing = await runCli(['dashboards', 'revisions', 'dash_01jd0000000000000000000000'], { configDir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /404/);
});
