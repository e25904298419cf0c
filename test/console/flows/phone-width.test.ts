import { test, before, after } from 'node:test';
import { chromiumMissing } from '../../helpers/chromium.js';
import { waitFor } from '../../helpers/wait.js';
import { assertFits, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * Phone width (issue 50, point 9): every page of the console fits 360 px without sideways
 * scrolling, with content on it (a list with rows, a resource's page), as the owner, who sees
 * every control. The navigation wraps rather than hiding areas past the window's edge.
 */
const noChromium = chromiumMissing('console phone width');
let site: ConsoleSite;
const pages: string[] = [];
before(async () => {
  if (noChromium) return;
  site = await startConsoleSite({ WSP_WEBHOOKS_ALLOW_HTTP: 'true', WSP_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  const secret = await site.api<{ id: string }>('POST', '/v1/secrets', { name: 'A_RATHER_LONG_SECRET_NAME_FOR_A_PHONE' });
  await site.api('POST', `/v1/secrets/${secret.id}/versions`, { data: Buffer.from('v').toString('base64'), comment: 'the first value of it' });
  const board = await site.api<{ id: string }>('POST', '/v1/dashboards', { name: 'Overview', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] });
  const pkg = await site.api<{ id: string }>('POST', '/v1/packages', { name: 'web' });
  const version = await site.api<{ id: string }>('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'app.yaml': 'name: {{name}}\n' } });
  // Renders wait for review: a second render opens a change request, whose pages are walked too.
  const install = await site.api<{ id: string }>('POST', '/v1/installs', { name: 'web-prod', package_id: pkg.id, version_id: version.id, values: { name: 'web' }, delivery: 'change_request' });
  await waitFor('the first render to land', async () => (await site.api('GET', `/v1/installs/${install.id}/repository`)).head_commit_sha, { timeoutMs: 30_000 });
  const { etag } = await site.api<{ etag: string }>('GET', `/v1/installs/${install.id}`);
  await site.api('PATCH', `/v1/installs/${install.id}`, { values: { name: 'a-rather-long-name-for-the-web-service-on-a-phone' } }, { headers: { 'if-match': `"${etag}"` } });
  const changeId = await waitFor('a change request to open', async () => (await site.api<{ open_change_request_id: string | null }>('GET', `/v1/installs/${install.id}`)).open_change_request_id, {
    timeoutMs: 30_000,
  });
  const hook = await site.api<{ id: string }>('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hooks/a/rather/long/path/for/a/phone', event_types: ['secret.*', 'install.*'] });
  await site.api('POST', `/v1/workspaces/${site.owner.workspace_id}/invitations`, { email: 'a-rather-long-address@example.com', role: 'member' });
  await site.api('POST', '/v1/api_tokens', { name: 'ci', scopes: ['secrets:read'] });
  const [region] = (await site.api<{ data: { id: string }[] }>('GET', '/v1/regions')).data;
  const cluster = await site.api<{ id: string }>('POST', '/v1/clusters', { name: 'a-rather-long-cluster-name-for-a-phone', region: region!.id, description: 'the European production' });
  pages.push(
    '/console/dashboards',
    `/console/dashboards/${board.id}`,
    `/console/dashboards/${board.id}/edit`,
    `/console/dashboards/${board.id}/revisions`,
    '/console/secrets',
    `/console/secrets/${secret.id}`,
    '/console/packages',
    `/console/packages/${pkg.id}`,
    '/console/installs',
    `/console/installs/${install.id}`,
    `/console/installs/${install.id}/changes`,
    `/console/installs/${install.id}/changes/${changeId}`,
    '/console/compute',
    '/console/machines',
    '/console/clusters',
    `/console/clusters/${cluster.id}`,
    '/console/admin/members',
    '/console/admin/tokens',
    '/console/admin/webhooks',
    `/console/admin/webhooks/${hook.id}`,
    '/console/admin/audit',
    '/console/account/sessions',
    '/console/account/events',
    '/console/notifications',
    '/console/no-such-page',
  );
});
after(() => site?.close());

test('every page fits 360 px without sideways scrolling', { skip: noChromium }, async () => {
  const w = await site.signedIn({ width: 360 });
  const { page } = w;
  for (const path of pages) {
    await walk(page, `phone${path.replaceAll('/', '-')}`, async () => {
      await page.goto(`${site.url}${path}`);
      await page.locator('main h1').first().waitFor();
      await page.waitForLoadState('networkidle');
      await assertFits(page).catch((err: Error) => {
        throw new Error(`${path}: ${err.message}`);
      });
    });
  }
  // The navigation wraps: every area's link is whole on screen, none hidden past the edge of a
  // clipped strip with no cue that more is there.
  const links = page.getByRole('navigation', { name: 'Areas' }).getByRole('link');
  const count = await links.count();
  for (let i = 0; i < count; i++) {
    const box = (await links.nth(i).boundingBox())!;
    if (box.x < 0 || box.x + box.width > 360) throw new Error(`the link ${await links.nth(i).innerText()} reaches ${Math.round(box.x + box.width)} px of a 360 px window`);
  }
  await shot(page, 'phone-not-found');
  await w.done();
});
