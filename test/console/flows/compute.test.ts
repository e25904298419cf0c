import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { assertAria, assertFits, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * Compute in the console (issue 19, flow 5), against the server's embedded provider simulation:
 * a config whose region and image are chosen from the catalog, a machine followed to running,
 * suspended (with the time left before its snapshot expires), resumed, deleted after typing
 * its name.
 */
const noChromium = chromiumMissing('console compute');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

const statusOf = async (id: string) => (await site.fetch('GET', `/v1/machines/${id}`)).json().then((m: { status?: string }) => m.status ?? 'gone');

test('a config from the catalog, a machine created, suspended, resumed and deleted', { skip: noChromium }, async () => {
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'compute', async () => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Machines' }).click();
    await page.getByText('No machines.').waitFor();
    await page.getByRole('link', { name: 'make one first' }).click();
    await page.getByRole('heading', { name: 'Compute configs' }).waitFor();
    await page.getByText('No compute configs.').waitFor();
    // The catalog as choices: regions and images by name, server types with their prices.
    const catalog = await site.api('GET', '/v1/compute/catalog');
    const region = page.getByLabel('Region');
    await region.locator('option').first().waitFor({ state: 'attached' });
    assert.deepEqual(
      await region.locator('option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value)),
      catalog.regions.map((r: { id: string }) => r.id),
    );
    assert.equal(await page.getByRole('table', { name: 'Server types offered' }).getByRole('row').count(), catalog.server_types.length + 1);
    assert.equal(await region.inputValue(), catalog.regions[0].id, 'a choice is shown as made, not blank');
    await assertAria(page, ['combobox "Region"', 'combobox "Image"', 'textbox "Server types"', 'button "Create config"']);

    // A filter that matches nothing in the region: the API's refusal at that field.
    await page.getByLabel('Name').fill('web');
    await page.getByRole('textbox', { name: 'Server types' }).fill('zz*');
    await page.getByRole('button', { name: 'Create config' }).click();
    await page.locator('#f-config-filter-error').waitFor();
    await page.getByRole('textbox', { name: 'Server types' }).fill('*');
    await page.getByRole('button', { name: 'Create config' }).click();
    await page.getByRole('main').getByText('web', { exact: true }).waitFor();

    await page.getByRole('link', { name: 'Machines' }).first().click();
    await page.getByLabel('Server type').locator('option').first().waitFor({ state: 'attached' });
    assert.match(await page.getByLabel('Server type').inputValue(), /^c/, 'the first type the config allows is chosen');
    await page.getByLabel('Host name (optional)').fill('web-1');
    await page.getByRole('button', { name: 'Create machine' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /done\./ })
      .waitFor({ timeout: 30_000 });
    const row = page.locator('.rows li').filter({ hasText: 'web-1' });
    await row.getByText('running').waitFor();
    const [machine] = (await site.api('GET', '/v1/machines')).data;
    assert.equal(machine.status, 'running');

    await row.getByRole('button', { name: 'Suspend web-1' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /suspend: done\./ })
      .waitFor({ timeout: 30_000 });
    await row.getByText('suspended').waitFor();
    const suspension = page.getByRole('list', { name: 'Suspensions' }).getByRole('listitem').filter({ hasText: 'web-1' });
    assert.match(await suspension.innerText(), /snapshot is deleted in \d+ days/);
    await shot(page, 'machines');

    await row.getByRole('button', { name: 'Resume web-1' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /resume: done\./ })
      .waitFor({ timeout: 30_000 });
    await row.getByText('running').waitFor();
    assert.equal(await statusOf(machine.id), 'running');
    assert.equal(await page.getByRole('list', { name: 'Suspensions' }).count(), 0);

    await row.getByRole('button', { name: 'Delete web-1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete web-1?' });
    assert.ok(await dialog.getByRole('button', { name: 'Delete' }).isDisabled());
    await dialog.getByLabel('Type web-1 to confirm').fill('web-1');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No machines.').waitFor({ timeout: 30_000 });
    assert.equal(await statusOf(machine.id), 'gone');

    await page.setViewportSize({ width: 390, height: 800 });
    await assertFits(page);
  });
  await w.done();
});
