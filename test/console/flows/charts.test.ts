import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { assertFits, shot, startConsoleSite, type ConsoleSite } from '../console-site.js';
import { metricWidget } from '../widgets.js';

/**
 * A chart says what it draws (issue 50, "also found"): a legend names the series beside its
 * colour, and the pointer over the chart shows the time and the value under it.
 */
const noChromium = chromiumMissing('console charts');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

test('a chart has a legend, and hovering it shows the time and value under the pointer', { skip: noChromium }, async () => {
  for (const name of ['ONE', 'TWO', 'THREE']) await site.api('POST', '/v1/secrets', { name });
  const board = await site.api<{ id: string }>('POST', '/v1/dashboards', {
    name: 'Charted',
    purpose: 'custom',
    filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }],
    default_filter_values: {},
    widgets: [metricWidget('Writes', 'writes', 4)],
  });
  const w = await site.signedIn();
  const { page } = w;
  await page.goto(`${site.url}/console/dashboards/${board.id}`);
  const region = page.getByRole('region', { name: 'Writes' });
  await region.locator('canvas').waitFor();
  const legend = region.locator('.u-legend');
  await legend.waitFor();
  assert.match(await legend.innerText(), /Writes/, 'the legend names the series');
  // The figures' time is when they were asked, never in the future (the range ends with the minute under way).
  assert.doesNotMatch(await page.getByText(/^Layout last changed/).innerText(), /figures as of in /);

  // The last point holds this test's writes: hover the right edge of the plot.
  const over = region.locator('.u-over');
  const box = (await over.boundingBox())!;
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  await page.waitForFunction(() => /\d+ events/.test(document.querySelector('.u-legend')?.textContent ?? ''));
  const text = await legend.innerText();
  const [, value] = /(\d+) events/.exec(text)!;
  assert.ok(Number(value) >= 3, `the value under the pointer: ${text}`);
  assert.match(text, /\d{1,2}:\d{2}/, `and its time: ${text}`);
  await shot(page, 'chart-hover');

  await page.setViewportSize({ width: 360, height: 740 });
  await region.locator('.u-legend').waitFor();
  await assertFits(page);
  await w.done();
});
