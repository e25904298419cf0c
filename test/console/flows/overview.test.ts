import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { startConsoleSite, type ConsoleSite } from '../console-site.js';

/**
 * No dead end on a new workspace overview (issue 50, point 5): made in the console, it opens with
 * the built-in layout, not empty behind a red Reset.
 */
const noChromium = chromiumMissing('console workspace overview');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

test('a workspace overview made in the console opens with the built-in layout', { skip: noChromium }, async () => {
  const w = await site.signedIn();
  const { page } = w;
  await page.getByLabel('Name', { exact: true }).fill('Our overview');
  await page.getByLabel('Purpose').selectOption('workspace_overview');
  await page.getByRole('button', { name: /^Create/ }).click();
  await page.getByRole('heading', { name: 'Our overview', level: 1 }).waitFor();
  await page.locator('.widget').first().waitFor();
  const made = (await site.api<{ data: { id: string; name: string }[] }>('GET', '/v1/dashboards')).data.find((d) => d.name === 'Our overview')!;
  const stored = await site.api<{ widgets: unknown[]; filter_definitions: unknown[] }>('GET', `/v1/dashboards/${made.id}`);
  assert.ok(stored.widgets.length > 0, 'the built-in widgets are stored');
  assert.equal(await page.locator('.widget').count(), stored.widgets.length, 'and drawn');
  assert.equal(await page.getByText('No widgets yet').count(), 0);
  const revisions = await site.api<{ data: { source: string; summary: string | null }[] }>('GET', `/v1/dashboards/${made.id}/revisions`);
  assert.deepEqual(
    revisions.data.map((r) => r.source),
    ['reset', 'manual'],
    'the layout is a revision of its own, after the one made on creation',
  );
  await w.done();
});
