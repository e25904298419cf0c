import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../../helpers/chromium.js';
import { PASSWORD, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * The console shows each role only the controls that work (issue 50, point 1; docs/spec-gaps.md,
 * "Roles (issue 50)"): a viewer reads and changes nothing (no create forms, no Edit, no Reveal);
 * a member writes but takes no irreversible or workspace-wide action (no Destroy, no Delete of a
 * secret, no role selects, no invitations, no webhooks or audit in the navigation); an admin has
 * them all. Each control a role lacks would answer 403, which the API tests hold; here, what the
 * page draws.
 */
const noChromium = chromiumMissing('console roles');
let site: ConsoleSite;
let secretId: string;
let dashboardId: string;
let packageId: string;
let installId: string;
let configName: string;

before(async () => {
  if (noChromium) return;
  site = await startConsoleSite();
  const ws = site.owner.workspace_id;
  for (const role of ['admin', 'member', 'viewer']) {
    const { user_id } = await site.admin.createUser({ name: `The ${role}`, email: `${role}@example.com` });
    await site.admin.setPassword(user_id, PASSWORD);
    await site.admin.addMember(ws, user_id, role);
  }
  secretId = (await site.api<{ id: string }>('POST', '/v1/secrets', { name: 'API_KEY' })).id;
  await site.api('POST', `/v1/secrets/${secretId}/versions`, { data: Buffer.from('k-1').toString('base64') });
  dashboardId = (await site.api<{ id: string }>('POST', '/v1/dashboards', { name: 'Team board', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] })).id;
  packageId = (await site.api<{ id: string }>('POST', '/v1/packages', { name: 'web' })).id;
  const version = await site.api<{ id: string }>('POST', `/v1/packages/${packageId}/versions`, { semver: '1.0.0', files: { 'a.txt': 'hello {{who}}\n' } });
  installId = (await site.api<{ id: string }>('POST', '/v1/installs', { name: 'web-prod', package_id: packageId, version_id: version.id, values: { who: 'team' } })).id;
  const catalog = await site.api<{ provider: string; regions: { id: string }[]; images: { id: string }[] }>('GET', '/v1/compute/catalog');
  configName = 'eu-web';
  await site.api('POST', '/v1/compute/configs', { name: configName, provider: catalog.provider, region: catalog.regions[0]!.id, image: catalog.images[0]!.id, machine_type_filter: '*' });
});
after(() => site?.close());

const count = (page: Page, role: 'button' | 'link' | 'heading' | 'combobox', name: string | RegExp) => page.getByRole(role, { name, exact: typeof name === 'string' }).count();

/** What one role sees on each page: each control present (true) or absent (false). */
async function controls(page: Page): Promise<Record<string, boolean>> {
  const seen: Record<string, boolean> = {};
  const nav = page.getByRole('navigation', { name: 'Areas' });
  for (const area of ['API tokens', 'Webhooks', 'Audit log', 'Members']) seen[`nav ${area}`] = (await nav.getByRole('link', { name: area, exact: true }).count()) > 0;

  await page.goto(`${site.url}/console/secrets`);
  await page.getByRole('link', { name: 'API_KEY' }).waitFor();
  seen['new secret'] = (await count(page, 'button', 'Create secret')) > 0;
  await page.goto(`${site.url}/console/secrets/${secretId}`);
  await page.getByText('Version 1', { exact: true }).waitFor();
  seen['reveal'] = (await count(page, 'button', 'Reveal version 1')) > 0;
  seen['disable version'] = (await count(page, 'button', 'Disable version 1')) > 0;
  seen['destroy version'] = (await count(page, 'button', 'Destroy version 1')) > 0;
  seen['delete secret'] = (await count(page, 'button', 'Delete secret')) > 0;
  seen['add version'] = (await count(page, 'button', 'Add version')) > 0;

  await page.goto(`${site.url}/console/dashboards`);
  await page.getByRole('link', { name: 'Team board' }).first().waitFor();
  seen['new dashboard'] = (await count(page, 'button', 'Create dashboard')) > 0;
  await page.goto(`${site.url}/console/dashboards/${dashboardId}`);
  await page.getByRole('heading', { name: 'Team board', level: 1 }).waitFor();
  seen['edit dashboard'] = (await count(page, 'link', 'Edit')) > 0;
  seen['delete dashboard'] = (await count(page, 'button', 'Delete')) > 0;

  await page.goto(`${site.url}/console/packages/${packageId}`);
  await page.getByRole('button', { name: 'Preview' }).waitFor();
  seen['install'] = (await count(page, 'button', 'Install this version')) > 0;
  seen['publish'] = (await count(page, 'button', 'Publish')) > 0;
  seen['delete package'] = (await count(page, 'button', 'Delete package')) > 0;
  await page.goto(`${site.url}/console/installs/${installId}`);
  await page.getByRole('heading', { name: 'web-prod', level: 1 }).waitFor();
  seen['change install'] = (await count(page, 'button', 'Preview the change')) > 0;
  seen['delete install'] = (await count(page, 'button', 'Delete install')) > 0;

  await page.goto(`${site.url}/console/compute`);
  await page.getByText(configName, { exact: true }).waitFor();
  seen['new config'] = (await count(page, 'button', 'Create config')) > 0;
  seen['delete config'] = (await count(page, 'button', 'Delete')) > 0;

  await page.goto(`${site.url}/console/admin/members`);
  await page.getByRole('cell', { name: 'viewer@example.com' }).waitFor();
  seen['role selects'] = (await count(page, 'combobox', /^Role of /)) > 0;
  seen['remove member'] = (await count(page, 'button', 'Remove')) > 0;
  seen['invitations'] = (await count(page, 'heading', 'Invitations')) > 0;
  return seen;
}

const ALL = [
  'nav API tokens',
  'nav Webhooks',
  'nav Audit log',
  'nav Members',
  'new secret',
  'reveal',
  'disable version',
  'destroy version',
  'delete secret',
  'add version',
  'new dashboard',
  'edit dashboard',
  'delete dashboard',
  'install',
  'publish',
  'delete package',
  'change install',
  'delete install',
  'new config',
  'delete config',
  'role selects',
  'remove member',
  'invitations',
];
const only = (...present: string[]) => Object.fromEntries(ALL.map((c) => [c, present.includes(c)]));
const WRITES = ['new secret', 'reveal', 'disable version', 'add version', 'new dashboard', 'edit dashboard', 'delete dashboard', 'install', 'publish', 'change install', 'new config'];

for (const [role, expected] of [
  ['admin', only(...ALL)],
  ['member', only('nav Members', ...WRITES)],
  ['viewer', only('nav Members')],
] as const) {
  test(`a${role === 'admin' ? 'n' : ''} ${role} sees only the controls the role permits`, { skip: noChromium }, async () => {
    const w = await site.signedIn({ email: `${role}@example.com` });
    await walk(w.page, `roles-${role}`, async () => {
      const seen = await controls(w.page);
      assert.deepEqual(seen, expected);
      await shot(w.page, `roles-${role}-members`);
    });
    // The permissions the page followed are the ones GET /v1/me gives.
    const me = await (
      await site.fetch('GET', '/v1/me', undefined, {
        session: (
          await site.admin.createSession(
            (await site.api<{ data: { user_id: string; email: string }[] }>('GET', `/v1/workspaces/${site.owner.workspace_id}/members`)).data.find((m) => m.email === `${role}@example.com`)!.user_id,
          )
        ).session_token,
      })
    ).json();
    assert.equal(me.role, role);
    assert.equal(me.permissions.includes('write'), role !== 'viewer');
    await w.done();
  });
}

test('a viewer who opens the editor by its address is told the role reads only, and no form is drawn', { skip: noChromium }, async () => {
  const w = await site.signedIn({ email: 'viewer@example.com' });
  await w.page.goto(`${site.url}/console/dashboards/${dashboardId}/edit`);
  await w.page.getByText('reads dashboards but does not change them').waitFor();
  assert.equal(await w.page.getByRole('button', { name: 'Save' }).count(), 0);
  await w.done();
});
