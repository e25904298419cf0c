import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { assertAria, assertFits, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';
import { metricWidget } from '../widgets.js';

/**
 * Dashboards in the console (issue 19, flow 2): the list and a new one, a dashboard laid out as
 * its widgets say with platform metrics drawn from /v1/platform_metrics, editing with errors at
 * the field, the revision timeline, the side-by-side diff, restore and reset with their
 * confirmation and the If-Match conflict explained.
 */
const noChromium = chromiumMissing('console dashboards');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

test('create, lay out, draw, edit with field errors, history, diff, restore, conflict, reset', { skip: noChromium }, async () => {
  // Some activity for the charts to show.
  for (const name of ['one', 'two', 'three']) await site.api('POST', '/v1/secrets', { name });
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'dashboards', async () => {
    await page
      .getByRole('heading', { name: 'Dashboards in Default' })
      .or(page.getByRole('heading', { name: /^Dashboards in / }))
      .first()
      .waitFor();
    await page.getByText('No dashboards yet').waitFor();
    await assertAria(page, ['heading "New dashboard"', 'textbox "Name"', 'combobox "Purpose"', 'button "Create dashboard"']);

    // A name too long: the API's message shows at the field, nothing is created.
    await page.getByLabel('Name').fill('x'.repeat(101));
    await page.getByRole('button', { name: 'Create dashboard' }).click();
    await page.locator('#f-new-name-error').waitFor();
    assert.match(await page.locator('#f-new-name-error').innerText(), /100/);
    assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');

    await page.getByLabel('Name').fill('Operations');
    await page.getByRole('button', { name: 'Create dashboard' }).click();
    await page.getByRole('heading', { name: 'Operations', level: 1 }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    assert.match(id, /^dash_/);
    await page.getByText('No widgets yet').waitFor();

    // Edit: add three metric widgets, size them, save.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor();
    await page.getByLabel('Description').fill('What changed, and what runs');
    // Filters: a time filter twice is refused at the filters (keys are unique), once is kept.
    await page.getByRole('combobox', { name: 'Add a filter' }).selectOption('time');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('.rows .field-error, h2 + .field-error').first().waitFor();
    await page.getByRole('button', { name: 'Remove filter Time' }).nth(1).click();
    for (const label of ['Writes', 'Secret accesses', 'Machines running']) {
      await page.getByRole('combobox', { name: 'Metric' }).selectOption({ label });
      await page.getByRole('button', { name: 'Add metric widget' }).click();
    }
    await page.getByLabel('Columns').first().selectOption('4');
    await page.getByLabel('Height').first().selectOption('tall');
    await page.getByLabel('Columns').nth(1).selectOption('1');
    await page.getByLabel('Height').nth(2).selectOption('compact');
    await page.getByLabel('Summary of the change (optional)').fill('first layout');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Operations', level: 1 }).waitFor();
    await page.locator('.widget canvas').nth(2).waitFor();
    const writes = page.getByRole('region', { name: 'Writes' });
    const accesses = page.getByRole('region', { name: 'Secret accesses' });
    const wide = (await writes.boundingBox())!;
    const narrow = (await accesses.boundingBox())!;
    assert.ok(wide.width > narrow.width * 3.5, `col_span 4 (${wide.width}px) is four times col_span 1 (${narrow.width}px)`);
    assert.ok(wide.height > (await page.getByRole('region', { name: 'Machines running' }).boundingBox())!.height, 'tall is taller than compact');
    await assertAria(page, ['region "Writes"', /img "Writes: \d+ points, latest \d+ events"/, 'combobox "Time range"', 'link "Edit"', 'link "History"', 'button "Reset"']);
    // The chart draws the API's series: the last quarter hour holds the secrets and the dashboard made above.
    const label = (await page.getByRole('img', { name: /^Writes:/ }).getAttribute('aria-label'))!;
    const [, points, latest] = /(\d+) points, latest (\d+)/.exec(label)!;
    assert.equal(Number(points), 96);
    assert.ok(Number(latest) >= 5, label);
    // The drawn series is the API's: the same range gives the same points.
    const stored = await site.api('GET', `/v1/dashboards/${id}`);
    assert.equal(stored.widgets.length, 3);
    assert.deepEqual(
      stored.widgets.map((x: { col_span: number }) => x.col_span),
      [4, 1, 2],
    );
    assert.deepEqual(stored.filter_definitions, [{ kind: 'time', key: 'time', label: 'Time' }]);

    // The time filter lives in the address: reload keeps it.
    await page.getByRole('combobox', { name: 'Time range' }).selectOption('7d');
    await page.waitForURL(/range=7d/);
    await page.reload();
    assert.equal(await page.getByRole('combobox', { name: 'Time range' }).inputValue(), '7d');
    await page.locator('.widget canvas').first().waitFor();
    await shot(page, 'dashboard');

    // A widget naming a metric that does not exist says so plainly.
    await site.api('PATCH', `/v1/dashboards/${id}`, { widgets: [...stored.widgets, metricWidget('Old metric', 'render_failures', 2, 'standard')] }, { headers: { 'if-match': `"${stored.etag}"` } });
    await page.reload();
    await page
      .getByRole('region', { name: 'Old metric' })
      .getByText(/Cannot draw render_failures version 1: There is no platform metric render_failures/)
      .waitFor();

    // Field errors in the editor: a title over 100 characters is refused at that widget's title.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('Title of widget 1').fill('t'.repeat(101));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('[id="f-widgets.0.title-error"]').waitFor();
    assert.equal(await page.getByLabel('Title of widget 1').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Title of widget 1').fill('Changes');
    await page.getByRole('button', { name: 'Remove Old metric' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('region', { name: 'Changes' }).waitFor();

    // The timeline: each revision's source, author and time.
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    const items = page.locator('.timeline > li');
    await items.nth(3).waitFor();
    assert.equal(await items.count(), 4);
    assert.match(await items.first().innerText(), /manual\s+edited by Owner \(current\)/);
    assert.match(await items.nth(2).innerText(), /first layout/);
    await assertAria(page, [/listitem/, /link "See the changes"/]);

    // The diff of the rename against its parent, side by side, with old and new values.
    await items.first().getByRole('link', { name: 'See the changes' }).click();
    const diff = page.getByRole('table', { name: 'Changes against the previous revision' });
    await diff.waitFor();
    const row = diff.getByRole('row', { name: /^Changes: title/ });
    assert.match(await row.locator('td.old').innerText(), /Writes/);
    assert.match(await row.locator('td.new').innerText(), /Changes/);
    assert.match(await diff.innerText(), /widget removed: Old metric/);
    await shot(page, 'revision-diff');
    // Each view has its address: back and forward move between them.
    await page.goBack();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    await page.goForward();
    await diff.waitFor();

    // Restore the first layout, confirmed in a dialog; someone else's change first is explained.
    await page.goto(`${site.url}/console/dashboards/${id}/revisions`);
    await items.nth(2).getByRole('link', { name: 'See the changes' }).click();
    await page.getByRole('button', { name: 'Restore this revision' }).waitFor();
    const current = await site.api('GET', `/v1/dashboards/${id}`);
    await site.api('PATCH', `/v1/dashboards/${id}`, { name: 'Operations (theirs)' }, { headers: { 'if-match': `"${current.etag}"` } });
    await page.getByRole('button', { name: 'Restore this revision' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore this revision?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await page.getByRole('alert').filter({ hasText: 'Someone else changed this dashboard' }).waitFor();
    assert.equal((await site.api('GET', `/v1/dashboards/${id}`)).name, 'Operations (theirs)', 'the stale restore did nothing');
    // The page now holds their etag: restoring again works.
    await page.getByRole('button', { name: 'Restore this revision' }).click();
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await page.waitForURL(/\/revisions$/);
    const restored = await site.api('GET', `/v1/dashboards/${id}/revisions?limit=1`);
    assert.equal(restored.data[0].source, 'restore');
    assert.equal((await site.api('GET', `/v1/dashboards/${id}`)).name, 'Operations');

    // A snippet widget shows its snippet and display type, and its drift once the snippet changes.
    const snippet = await site.api('POST', '/v1/snippets', { name: 'errors', source: 'select count(*) from errors' });
    const board = await site.api('POST', '/v1/dashboards', {
      name: 'Snippets',
      purpose: 'custom',
      filter_definitions: [],
      default_filter_values: {},
      widgets: [
        {
          widget_type: 'snippet',
          position: 0,
          title: 'Error count',
          col_span: 2,
          height: 'standard',
          drill_down: null,
          visualization_options: {},
          freshness_policy: { mode: 'provider_default' },
          snippet_id: snippet.id,
          snippet_etag: snippet.etag,
          input_bindings: {},
          visualization: 'stat',
          refresh_policy: { mode: 'on_load' },
          display_type: 'stat',
        },
      ],
    });
    await page.goto(`${site.url}/console/dashboards/${board.id}`);
    const pinned = page.getByRole('region', { name: 'Error count' });
    await pinned.getByText('select count(*) from errors').waitFor();
    await pinned.getByText('in step').waitFor();
    assert.match(await pinned.innerText(), /Display: stat/);
    await site.api('PATCH', `/v1/snippets/${snippet.id}`, { source: 'select count(*) from errors where fatal' }, { headers: { 'if-match': snippet.etag } });
    await page.reload();
    await pinned.getByText('drifted').waitFor();
    await pinned.getByText('Its snippet changed since this widget pinned it.').waitFor();
    await pinned.getByText('select count(*) from errors where fatal').waitFor();
    await shot(page, 'snippet-drift');
    const changed = await site.api('GET', `/v1/snippets/${snippet.id}`);
    await site.api('POST', `/v1/snippets/${snippet.id}:archive`, undefined, { headers: { 'if-match': changed.etag } });
    await page.reload();
    await pinned.getByText('Its snippet is archived.').waitFor();
    const archived = await site.api('GET', `/v1/snippets/${snippet.id}`);
    await site.api('DELETE', `/v1/snippets/${snippet.id}`, undefined, { headers: { 'if-match': archived.etag } });
    await page.reload();
    await pinned.getByText('Its snippet no longer exists.').waitFor();
    assert.equal(await pinned.locator('.widget-problem').count(), 0, 'a missing snippet is drift, not an error');

    // Reset, confirmed: an overview dashboard goes back to its layout.
    const overview = await site.api('POST', '/v1/dashboards', { name: 'Overview', purpose: 'workspace_overview', filter_definitions: [], default_filter_values: {}, widgets: [] });
    await page.goto(`${site.url}/console/dashboards/${overview.id}`);
    await page.getByRole('button', { name: 'Reset' }).click();
    await page.getByRole('dialog', { name: 'Reset this dashboard?' }).getByRole('button', { name: 'Reset' }).click();
    await page.getByRole('region', { name: 'Running machines' }).waitFor();
    await page.getByRole('region', { name: 'Failed renders' }).locator('canvas').waitFor();
    assert.equal(await page.locator('.widget-problem').count(), 0, 'the overview layout draws every widget');

    // 390 px wide: one column, nothing wider than the window.
    await page.setViewportSize({ width: 390, height: 800 });
    await assertFits(page);
    await shot(page, 'dashboard-390');
  });
  await w.done();
});
