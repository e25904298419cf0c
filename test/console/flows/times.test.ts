import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { startConsoleSite, type ConsoleSite } from '../console-site.js';

/**
 * Relative times stay true (issue 50, "also found"): "now" does not stay on screen for an hour,
 * every time on the page moves on as the clock does. And a dashboard says what its time is:
 * when its layout last changed, and the time its figures run to, not an "Updated" that reads as
 * data freshness.
 */
const noChromium = chromiumMissing('console times');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

test('relative times refresh as the clock moves; a dashboard names its layout change and the time its figures run to', { skip: noChromium }, async () => {
  await site.api('POST', '/v1/secrets', { name: 'TICKING' });
  const board = await site.api<{ id: string }>('POST', '/v1/dashboards', { name: 'Clocked', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] });
  const w = await site.open();
  const { page } = w;
  // The page's own clock, from the real now: the server's times stay comparable with it.
  await page.clock.install();
  await page.goto(`${site.url}/console/sign-in`);
  await page.getByLabel('Email').fill(site.owner.email);
  await page.getByLabel('Password').fill('the console password');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: /^Dashboards/ }).waitFor();

  await page.goto(`${site.url}/console/secrets`);
  const created = page
    .getByRole('row', { name: /TICKING/ })
    .locator('time')
    .first();
  await created.waitFor();
  assert.match(await created.innerText(), /second|now/);
  await page.clock.fastForward('05:00');
  await page.waitForFunction(() => /5 minutes ago/.test(document.querySelector('tbody tr time')?.textContent ?? ''), undefined, { timeout: 5_000 });
  await page.clock.fastForward('01:00:00');
  await page.waitForFunction(() => /hour/.test(document.querySelector('tbody tr time')?.textContent ?? ''), undefined, { timeout: 5_000 });

  await page.goto(`${site.url}/console/dashboards/${board.id}`);
  await page.getByRole('heading', { name: 'Clocked', level: 1 }).waitFor();
  const line = await page.getByText(/^Layout last changed/).innerText();
  assert.match(line, /^Layout last changed .+ · figures as of .+/);
  assert.equal(await page.getByText(/^Updated/).count(), 0);
  await w.done();
});
