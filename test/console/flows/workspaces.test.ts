import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * Switching workspace (issue 50, point 3): on a secret's or a dashboard's page of one workspace,
 * a switch leads to the other workspace's list of the same area; no view keeps the first
 * workspace's data (before, the secret of Acme stayed on screen under Beta, and Reveal said "The
 * secret does not exist").
 */
const noChromium = chromiumMissing('console workspaces');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

test("a switch of workspace on a resource's page leads to the new workspace's list of that area, with none of the old one's data", { skip: noChromium }, async () => {
  const acmeSecret = await site.api<{ id: string }>('POST', '/v1/secrets', { name: 'ACME_ONLY' });
  const acmeBoard = await site.api<{ id: string }>('POST', '/v1/dashboards', { name: 'Acme board', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] });
  const beta = await site.api<{ id: string }>('POST', '/v1/workspaces', { name: 'Beta' });
  const inBeta = { headers: { 'service-context': beta.id } };
  await site.api('POST', '/v1/secrets', { name: 'BETA_ONLY' }, inBeta);
  await site.api('POST', '/v1/dashboards', { name: 'Beta board', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] }, inBeta);
  const acme = site.owner.workspace_id;

  const w = await site.signedIn();
  const { page } = w;
  const path = () => new URL(page.url()).pathname;
  const workspace = page.getByRole('combobox', { name: 'Workspace' });
  await walk(page, 'workspace-switch', async () => {
    await workspace.selectOption({ value: acme });
    await page.goto(`${site.url}/console/secrets/${acmeSecret.id}`);
    await page.getByRole('heading', { name: 'ACME_ONLY', level: 1 }).waitFor();
    await workspace.selectOption({ label: 'Beta' });
    await page.getByRole('link', { name: 'BETA_ONLY' }).waitFor();
    assert.equal(path(), '/console/secrets');
    assert.equal(await page.getByText('ACME_ONLY').count(), 0, "the old workspace's secret is gone from the page");
    assert.equal(await page.getByText(/does not exist/).count(), 0);

    await workspace.selectOption({ value: acme });
    await page.getByRole('link', { name: 'ACME_ONLY' }).waitFor();
    await page.goto(`${site.url}/console/dashboards/${acmeBoard.id}`);
    await page.getByRole('heading', { name: 'Acme board', level: 1 }).waitFor();
    await workspace.selectOption({ label: 'Beta' });
    await page.getByRole('cell', { name: 'Beta board' }).waitFor();
    assert.equal(path(), '/console/dashboards');
    assert.equal(await page.getByText('Acme board').count(), 0, "the old workspace's dashboard is gone from the page");
    await shot(page, 'workspace-switched');

    // On a list, a switch stays on that area's list, now the new workspace's.
    await page.goto(`${site.url}/console/secrets`);
    await page.getByRole('link', { name: 'BETA_ONLY' }).waitFor();
    await workspace.selectOption({ value: acme });
    await page.getByRole('link', { name: 'ACME_ONLY' }).waitFor();
    assert.equal(path(), '/console/secrets');
    assert.equal(await page.getByText('BETA_ONLY').count(), 0);
  });
  await w.done();
});
