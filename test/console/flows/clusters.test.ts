import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../../helpers/chromium.js';
import { assertAria, assertFits, PASSWORD, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';
import { metricWidget } from '../../dashboards/fixtures.js';

/**
 * Clusters in the console (issue 52, points 2 and 3; docs/spec-gaps.md, "Clusters and regions"), against the server's
 * embedded provider simulation: a cluster made in a region picked with the server types it
 * offers, renamed, a machine made into it from the machines page, its delete refused with the
 * 409 naming that machine and then done once the machine is gone; a dashboard's cluster filter
 * and its default picked by the cluster's name, the id going to the API; each role's controls.
 */
const noChromium = chromiumMissing('console clusters');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

interface Region {
  id: string;
  name: string;
  city: string;
  server_types: string[];
}

const statusOf = async (path: string) => (await site.fetch('GET', path)).status;

/** The options of a select: their values and their text. */
const optionsOf = (page: Page, label: string) =>
  page
    .getByLabel(label, { exact: true })
    .locator('option')
    .evaluateAll((o) => o.map((x) => ({ value: (x as HTMLOptionElement).value, text: (x as HTMLOptionElement).textContent ?? '' })));

test('a cluster in a region, renamed, a machine made into it, its delete refused naming the machine, then done', { skip: noChromium }, async () => {
  const w = await site.signedIn();
  const { page } = w;
  const regions = (await site.api<{ data: Region[] }>('GET', '/v1/regions')).data;
  // Not the first region: the pick is the person's, not the form's default.
  const region = regions[1]!;
  await walk(page, 'clusters', async () => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Clusters' }).click();
    await page.getByRole('heading', { name: 'Clusters', exact: true }).waitFor();
    await page.getByText('No clusters yet.').waitFor();

    // The regions by city and name, each id as the value; the chosen one's server types shown.
    const select = page.getByLabel('Region');
    await select.locator('option').first().waitFor({ state: 'attached' });
    const options = await optionsOf(page, 'Region');
    assert.deepEqual(
      options.map((o) => o.value),
      regions.map((r) => r.id),
    );
    for (const [i, r] of regions.entries()) assert.ok(options[i]!.text.includes(r.city) && options[i]!.text.includes(r.name), `${options[i]!.text} names ${r.city}, ${r.name}`);
    await page.getByText(`Server types offered in ${regions[0]!.city}: ${regions[0]!.server_types.join(', ')}`).waitFor();
    await select.selectOption(region.id);
    await page.getByText(`Server types offered in ${region.city}: ${region.server_types.join(', ')}`).waitFor();
    await assertAria(page, ['textbox "Name"', 'combobox "Region"', 'textbox "Description (optional)"', 'button "Create cluster"']);

    // A name the API refuses: its message at the field, nothing made.
    await page.getByLabel('Name').fill('EU Prod');
    await page.getByRole('button', { name: 'Create cluster' }).click();
    await page.locator('#f-cluster-name-error').waitFor();
    assert.equal((await site.api('GET', '/v1/clusters')).data.length, 0);

    await page.getByLabel('Name').fill('eu-prod');
    await page.getByLabel('Description (optional)').fill('the European production');
    await page.getByRole('button', { name: 'Create cluster' }).click();
    await page.getByRole('heading', { name: 'eu-prod', exact: true }).waitFor();
    const [made] = (await site.api<{ data: { id: string; name: string; region: string; status: string }[] }>('GET', '/v1/clusters')).data;
    assert.equal(made!.region, region.id);
    assert.ok(page.url().endsWith(`/console/clusters/${made!.id}`));
    await page.locator('dl.facts').getByText('empty').waitFor();
    await page.locator('dl.facts').getByText(region.server_types.join(', ')).waitFor();

    // Renamed with If-Match: someone else's change made since the page opened is a conflict said in
    // words, their version shown; saved again, only the rename is sent and their description stays.
    const opened = await site.api<{ etag: string }>('GET', `/v1/clusters/${made!.id}`);
    await site.api('PATCH', `/v1/clusters/${made!.id}`, { description: 'changed elsewhere' }, { headers: { 'if-match': `"${opened.etag}"` } });
    await page.getByLabel('Name', { exact: true }).fill('eu-main');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'Someone else changed this cluster after you opened it' }).waitFor();
    await page.locator('dl.facts').getByText('changed elsewhere').waitFor();
    assert.equal(await page.getByLabel('Description', { exact: true }).inputValue(), 'changed elsewhere');
    assert.equal((await site.api('GET', `/v1/clusters/${made!.id}`)).name, 'eu-prod');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'eu-main', exact: true }).waitFor();
    const renamed = await site.api('GET', `/v1/clusters/${made!.id}`);
    assert.deepEqual([renamed.name, renamed.description], ['eu-main', 'changed elsewhere']);

    // The list: its status in words, its region, counts, and the link to it.
    await page.getByRole('link', { name: 'Clusters' }).first().click();
    const row = page.getByRole('list', { name: 'Clusters' }).getByRole('listitem').filter({ hasText: 'eu-main' });
    await row.getByText('empty').waitFor();
    // The installs count comes from its own request: until it answers, the row links "its installs".
    await row.filter({ hasText: new RegExp(`${region.city} \\(${region.id}\\) · no machines · 0 installs`) }).waitFor();

    // A config of the cluster's region; the cluster's page leads to the machines page with the cluster chosen.
    const catalog = await site.api<{ provider: string; images: { id: string }[] }>('GET', '/v1/compute/catalog');
    const config = await site.api<{ id: string }>('POST', '/v1/compute/configs', {
      name: 'eu-web',
      provider: catalog.provider,
      region: region.id,
      image: catalog.images[0]!.id,
      machine_type_filter: '*',
    });
    const elsewhere = await site.api<{ id: string }>('POST', '/v1/compute/configs', {
      name: 'elsewhere',
      provider: catalog.provider,
      region: regions[2]!.id,
      image: catalog.images[0]!.id,
      machine_type_filter: '*',
    });
    // A second cluster that is deleted while the form names it: the API's 404 at body.cluster_id shown at the field.
    const spare = await site.api<{ id: string; etag: string }>('POST', '/v1/clusters', { name: 'spare', region: region.id });
    await page.goto(`${site.url}/console/machines?cluster=${spare.id}`);
    const clusterSelect = page.getByLabel('Cluster', { exact: true });
    await clusterSelect.locator(`option[value="${spare.id}"]`).waitFor({ state: 'attached' });
    assert.equal(await clusterSelect.inputValue(), spare.id);
    assert.equal(await page.getByLabel('Config').inputValue(), config.id, "the cluster's region chose the config");
    await site.api('DELETE', `/v1/clusters/${spare.id}`, undefined, { headers: { 'if-match': `"${spare.etag}"` } });
    await page.getByLabel('Host name (optional)').fill('web-0');
    await page.getByRole('button', { name: 'Create machine' }).click();
    await page.locator('#f-machine-cluster-error').waitFor();
    assert.equal((await site.api('GET', '/v1/machines')).data.length, 0);

    await page.goto(`${site.url}/console/clusters/${made!.id}`);
    await page.getByRole('link', { name: 'Make one' }).click();
    await clusterSelect.locator(`option[value="${made!.id}"]`).waitFor({ state: 'attached' });
    assert.equal(await clusterSelect.inputValue(), made!.id);
    // Only the clusters of the config's region, and the default one.
    assert.deepEqual(
      (await optionsOf(page, 'Cluster')).map((o) => o.value),
      ['', made!.id],
    );
    await page.getByLabel('Config').selectOption(elsewhere.id);
    assert.deepEqual(
      (await optionsOf(page, 'Cluster')).map((o) => o.value),
      [''],
      'another region: the default cluster only',
    );
    await page.getByLabel('Config').selectOption(config.id);
    await clusterSelect.selectOption(made!.id);
    await page.getByLabel('Host name (optional)').fill('web-1');
    await page.getByRole('button', { name: 'Create machine' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /done\./ })
      .waitFor({ timeout: 30_000 });
    const [machine] = (await site.api<{ data: { id: string; cluster_id: string; hostname: string }[] }>('GET', '/v1/machines')).data;
    assert.equal(machine!.cluster_id, made!.id);
    await page.locator('.rows li').filter({ hasText: 'web-1' }).getByRole('link', { name: 'eu-main' }).waitFor();

    // Its page: the machine listed; a delete refused with the machine named and linked.
    await page.goto(`${site.url}/console/clusters/${made!.id}`);
    await page.getByRole('list', { name: 'Machines' }).getByText('web-1').waitFor();
    await page.locator('dl.facts').getByText('ready').waitFor();
    await page.getByRole('button', { name: 'Delete cluster' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete eu-main?' });
    await dialog.getByLabel('Type eu-main to confirm').fill('eu-main');
    await dialog.getByRole('button', { name: 'Delete cluster' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'The cluster was not deleted: it still holds 1 machine' });
    await refusal.waitFor();
    await refusal.getByRole('link', { name: 'web-1' }).waitFor();
    assert.equal(await statusOf(`/v1/clusters/${made!.id}`), 200);
    await shot(page, 'cluster-not-empty');

    // A dashboard's cluster filter lists the cluster by name and sends its id.
    const board = await site.api<{ id: string }>('POST', '/v1/dashboards', {
      name: 'Fleet',
      purpose: 'custom',
      filter_definitions: [
        { kind: 'time', key: 'time', label: 'Time range' },
        { kind: 'resource', key: 'cluster', resource: 'cluster', label: 'Cluster' },
        { kind: 'resource', key: 'product', resource: 'product', label: 'Product' },
      ],
      default_filter_values: {},
      widgets: [metricWidget({ title: 'Running machines', filter_bindings: { time: { mode: 'inherit', filter_key: 'time' }, cluster: { mode: 'inherit', filter_key: 'cluster' } } })],
    });
    await page.goto(`${site.url}/console/dashboards/${board.id}`);
    const filters = page.getByRole('group', { name: 'Filters' });
    const picker = filters.getByLabel('Cluster');
    await picker.locator(`option[value="${made!.id}"]`).waitFor({ state: 'attached' });
    const listed = await picker.locator('option').evaluateAll((o) => o.map((x) => [(x as HTMLOptionElement).value, x.textContent]));
    assert.deepEqual(listed, [
      ['', 'All clusters'],
      [made!.id, `eu-main (${region.id})`],
    ]);
    assert.deepEqual(await filters.getByLabel('Product').locator('option').allTextContents(), ['none yet']);
    assert.ok(await filters.getByLabel('Product').isDisabled());
    const narrowed = page.waitForRequest((r) => r.url().includes('/v1/platform_metrics/machines_running/series') && new URL(r.url()).searchParams.get('cluster') === made!.id);
    await picker.selectOption({ label: 'eu-main (' + region.id + ')' });
    await narrowed;
    assert.equal(new URL(page.url()).searchParams.get('cluster'), made!.id);
    await shot(page, 'dashboard-cluster-picker');

    // Its default, picked in the editor by name and saved as the id.
    await page.goto(`${site.url}/console/dashboards/${board.id}/edit`);
    await page.getByLabel('Default cluster').locator(`option[value="${made!.id}"]`).waitFor({ state: 'attached' });
    await page.getByLabel('Default cluster').selectOption({ label: `eu-main (${region.id})` });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Fleet', exact: true }).waitFor();
    assert.deepEqual((await site.api('GET', `/v1/dashboards/${board.id}`)).default_filter_values, { cluster: made!.id });

    // Emptied, the cluster deletes.
    await page.goto(`${site.url}/console/machines`);
    const machineRow = page.locator('.rows li').filter({ hasText: 'web-1' });
    await machineRow.getByText('running').waitFor();
    await machineRow.getByRole('button', { name: 'Delete web-1' }).click();
    const machineDialog = page.getByRole('dialog', { name: 'Delete web-1?' });
    await machineDialog.getByLabel('Type web-1 to confirm').fill('web-1');
    await machineDialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No machines.').waitFor({ timeout: 30_000 });
    await page.goto(`${site.url}/console/clusters/${made!.id}`);
    await page.getByText('No machines in this cluster.').waitFor();
    await page.getByRole('button', { name: 'Delete cluster' }).click();
    await dialog.getByLabel('Type eu-main to confirm').fill('eu-main');
    await dialog.getByRole('button', { name: 'Delete cluster' }).click();
    await page.getByRole('heading', { name: 'Clusters', exact: true }).waitFor();
    await page.getByText('No clusters yet.').waitFor();
    assert.equal(await statusOf(`/v1/clusters/${made!.id}`), 404);

    await page.setViewportSize({ width: 360, height: 800 });
    await assertFits(page);
  });
  await w.done();
});

test('each role sees only the cluster controls it may use: a viewer none, a member no delete', { skip: noChromium }, async () => {
  const ws = site.owner.workspace_id;
  for (const role of ['member', 'viewer']) {
    const { user_id } = await site.admin.createUser({ name: `The ${role}`, email: `${role}@example.com` });
    await site.admin.setPassword(user_id, PASSWORD);
    await site.admin.addMember(ws, user_id, role);
  }
  const regions = (await site.api<{ data: Region[] }>('GET', '/v1/regions')).data;
  const cluster = await site.api<{ id: string }>('POST', '/v1/clusters', { name: 'team', region: regions[0]!.id });
  const seen: Record<string, Record<string, boolean>> = {};
  for (const role of ['owner', 'member', 'viewer']) {
    const w = await site.signedIn({ email: `${role}@example.com` });
    const { page } = w;
    await page.goto(`${site.url}/console/clusters`);
    await page.getByRole('link', { name: 'team' }).waitFor();
    const create = (await page.getByRole('button', { name: 'Create cluster' }).count()) > 0;
    await page.goto(`${site.url}/console/clusters/${cluster.id}`);
    await page.getByRole('heading', { name: 'team', exact: true }).waitFor();
    await page.getByText('No machines in this cluster.').waitFor();
    seen[role] = {
      create,
      rename: (await page.getByRole('button', { name: 'Save' }).count()) > 0,
      delete: (await page.getByRole('button', { name: 'Delete cluster' }).count()) > 0,
      'make a machine': (await page.getByRole('link', { name: 'Make one' }).count()) > 0,
    };
    await w.done();
  }
  assert.deepEqual(seen, {
    owner: { create: true, rename: true, delete: true, 'make a machine': true },
    member: { create: true, rename: true, delete: false, 'make a machine': true },
    viewer: { create: false, rename: false, delete: false, 'make a machine': false },
  });
});
