import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../../helpers/chromium.js';
import { SHOTS, shot, startConsoleSite, type ConsoleSite } from '../console-site.js';
import { metricWidget } from '../widgets.js';

/**
 * Errors where the eye is (issue 50, point 4). A refusal moves focus, and the page, to the first
 * field it names or to its alert; a write that succeeds on the same page leaves focus where it
 * was, not on the page's body; a dashboard save that loses an If-Match race shows what each side
 * changed, in view and focused, and offers "reload and reapply" or "discard mine".
 */
const noChromium = chromiumMissing('console conflicts and focus');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

/** What has focus: its tag, name, role and whether it lies inside the viewport. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    const box = el?.getBoundingClientRect();
    return {
      tag: el?.tagName.toLowerCase() ?? null,
      name: el?.getAttribute('name') ?? null,
      role: el?.getAttribute('role') ?? null,
      text: el?.textContent?.slice(0, 80) ?? '',
      inView: Boolean(box && box.bottom > 0 && box.top < window.innerHeight),
    };
  });

/** A dashboard with a time filter and six widgets: tall enough that its Save button is far below the first field. */
const sixWidgetBoard = (name: string) =>
  site.api<{ id: string; etag: string }>('POST', '/v1/dashboards', {
    name,
    purpose: 'custom',
    filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }],
    default_filter_values: {},
    widgets: Array.from({ length: 6 }, (_, i) => metricWidget(`Widget ${i + 1}`)),
  });

test('a refused save focuses the field it names, in view; a save on the same page keeps focus off the body', { skip: noChromium }, async () => {
  const board = await sixWidgetBoard('Focus');
  const w = await site.signedIn({ width: 900 });
  const { page } = w;
  await page.setViewportSize({ width: 900, height: 600 });
  await page.goto(`${site.url}/console/dashboards/${board.id}/edit`);
  await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor();
  // The first widget's title, far above the Save button on a short window.
  await page.getByLabel('Title of widget 1').fill('t'.repeat(101));
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('[id="f-widgets.0.title-error"]').waitFor();
  await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true');
  const atField = await focused(page);
  assert.equal(atField.name, 'widgets.0.title', 'focus is on the field the server named');
  assert.ok(atField.inView, 'and the field is in view');

  // A write that keeps the page: a secret's new version.
  const secret = await site.api<{ id: string }>('POST', '/v1/secrets', { name: 'FOCUSED' });
  await page.goto(`${site.url}/console/secrets/${secret.id}`);
  await page.getByLabel('Value', { exact: true }).fill('v1');
  await page.getByRole('button', { name: 'Add version' }).click();
  await page.getByRole('button', { name: 'Reveal version 1' }).waitFor();
  // Its button stays disabled once the form is emptied: the form's first field has focus, ready for the next.
  await page.waitForFunction(() => document.activeElement?.getAttribute('name') === 'value');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await focused(page)).name, 'value', 'focus stays there');
  // A refused one: a comment over its limit is named at its field, which takes focus.
  await page.getByLabel('Value', { exact: true }).fill('v2');
  await page.getByLabel('Comment (optional)').fill('c'.repeat(2000));
  await page.getByRole('button', { name: 'Add version' }).click();
  await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true');
  assert.equal((await focused(page)).name, 'comment');
  await w.done();
});

test('a dashboard save that lost an If-Match race: what changed, in view and focused; reapply keeps mine and takes theirs', { skip: noChromium }, async () => {
  const board = await sixWidgetBoard('Race');
  const w = await site.signedIn({ width: 900 });
  const { page } = w;
  await page.setViewportSize({ width: 900, height: 600 });
  await page.goto(`${site.url}/console/dashboards/${board.id}/edit`);
  await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('Race (mine)');

  // Someone else saves first: a new description and one widget fewer.
  const theirs = await site.api<{ widgets: unknown[] }>('GET', `/v1/dashboards/${board.id}`);
  await site.api('PATCH', `/v1/dashboards/${board.id}`, { description: 'their words', widgets: theirs.widgets.slice(0, 5) }, { headers: { 'if-match': `"${board.etag}"` } });

  await page.getByRole('button', { name: 'Save' }).click();
  const panel = page.getByRole('alert').filter({ hasText: 'Someone else saved this dashboard after you opened it' });
  await panel.waitFor();
  await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'alert');
  const atPanel = await focused(page);
  assert.ok(atPanel.inView, 'the conflict is shown where the eye is');
  assert.match(atPanel.text, /Someone else saved/);
  const table = page.getByRole('table', { name: 'What changed since you opened the dashboard' });
  assert.match(await table.getByRole('row', { name: /^Name/ }).innerText(), /Race[\s\S]*unchanged[\s\S]*Race \(mine\)/);
  assert.match(await table.getByRole('row', { name: /^Description/ }).innerText(), /their words[\s\S]*unchanged/);
  assert.match(await table.getByRole('row', { name: /^Widgets/ }).innerText(), /Widget 5 \(2 col, standard\)\s+unchanged/);
  assert.equal(await table.getByRole('row', { name: /^Filters/ }).count(), 0, 'a part nobody changed is not listed');
  assert.equal((await site.api<{ name: string }>('GET', `/v1/dashboards/${board.id}`)).name, 'Race', 'nothing of mine was saved');
  await shot(page, 'dashboard-conflict');
  await panel.screenshot({ path: path.join(SHOTS, 'dashboard-conflict-panel.png') });

  await panel.getByRole('button', { name: 'Reload and reapply my changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Their version is loaded with your changes on it' }).waitFor();
  assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Race (mine)');
  assert.equal(await page.getByLabel('Description', { exact: true }).inputValue(), 'their words');
  assert.equal(await page.getByLabel('Title of widget 6').count(), 0, 'their removal of a widget is kept');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: 'Race (mine)', level: 1 }).waitFor();
  const saved = await site.api<{ name: string; description: string; widgets: unknown[] }>('GET', `/v1/dashboards/${board.id}`);
  assert.deepEqual([saved.name, saved.description, saved.widgets.length], ['Race (mine)', 'their words', 5]);

  // Both change the same part: marked, and "discard mine" loads theirs as it is.
  await page.goto(`${site.url}/console/dashboards/${board.id}/edit`);
  await page.getByLabel('Name', { exact: true }).fill('Race (mine again)');
  const now = await site.api<{ etag: string }>('GET', `/v1/dashboards/${board.id}`);
  await site.api('PATCH', `/v1/dashboards/${board.id}`, { name: 'Race (theirs)' }, { headers: { 'if-match': `"${now.etag}"` } });
  await page.getByRole('button', { name: 'Save' }).click();
  await panel.waitFor();
  assert.match(await table.getByRole('row', { name: /^Name/ }).innerText(), /both changed[\s\S]*Race \(theirs\)[\s\S]*Race \(mine again\)/);
  await panel.getByRole('button', { name: 'Discard mine, load theirs' }).click();
  assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Race (theirs)');
  await page.getByLabel('Description', { exact: true }).fill('edited after');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: 'Race (theirs)', level: 1 }).waitFor();
  assert.equal((await site.api<{ description: string }>('GET', `/v1/dashboards/${board.id}`)).description, 'edited after', 'the next save carries their etag');
  await w.done();
});
