import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { waitFor } from '../../helpers/wait.js';
import { assertAria, assertFits, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * Packages and installs in the console (issue 19, flow 4): a version's files, a preview with
 * values, an install made from it, its renders with state and error, the files of a commit,
 * and a restore followed until its operation is done.
 */
const noChromium = chromiumMissing('console installs');
let site: ConsoleSite;
before(async () => {
  // A small output quota, so a render can fail for a reason the page must show.
  if (!noChromium) site = await startConsoleSite({ WSP_QUOTA_RENDER_OUTPUT_BYTES: '4096' });
});
after(() => site?.close());

test("preview a version, install it, follow renders, see a commit's files, restore", { skip: noChromium }, async () => {
  const pkg = await site.api('POST', '/v1/packages', { name: 'web' });
  await site.api('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'app.yaml': 'replicas: {{replicas}}\nname: {{name}}\n', 'README.md': 'Deployed {{name}}\n' } });
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'installs', async () => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Installs' }).click();
    await page.getByText('No installs.').waitFor();
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Packages' }).click();
    await page.getByRole('main').getByRole('link', { name: 'web', exact: true }).click();
    await page.getByRole('heading', { name: 'web', level: 1 }).waitFor();
    // The version's templates, file by file.
    const templates = page.getByRole('group', { name: 'Templates of this version' });
    await templates.getByRole('button', { name: 'app.yaml' }).click();
    assert.match(await templates.getByLabel('Content of app.yaml').innerText(), /replicas: \{\{replicas\}\}/);

    // Values that are not JSON are refused at the field, before any request.
    await page.getByLabel('Values (JSON)').fill('{replicas: 3');
    await page.locator('#f-values-error').waitFor();
    assert.ok(await page.getByRole('button', { name: 'Preview' }).isDisabled());
    await page.getByLabel('Values (JSON)').fill('{"replicas": 3, "name": "shop"}');
    await page.getByRole('button', { name: 'Preview' }).click();
    const rendered = page.getByRole('group', { name: 'Rendered files' });
    await rendered.getByRole('button', { name: 'app.yaml' }).click();
    assert.equal(await rendered.getByLabel('Content of app.yaml').innerText(), 'replicas: 3\nname: shop\n');
    await assertAria(page, ['textbox "Values (JSON)"', 'button "Preview"', 'textbox "Install name"', 'button "Install this version"']);

    await page.getByLabel('Install name').fill('shop');
    await page.getByRole('button', { name: 'Install this version' }).click();
    await page.getByRole('heading', { name: 'shop', level: 1 }).waitFor();
    const installId = new URL(page.url()).pathname.split('/').pop()!;
    // The first render runs in the server's job runner: the page follows it (or finds it done
    // already), then shows its commit.
    const history = page.locator('.timeline > li');
    await history.first().getByText('succeeded').waitFor({ timeout: 30_000 });
    const [first] = (await site.api('GET', `/v1/installs/${installId}/renders`)).data;
    assert.equal(first.state, 'succeeded');
    await page.getByText(`commit ${first.commit_sha.slice(0, 10)}`).waitFor();

    // A second render from new values: a field per value the install has, a preview of what the
    // render would change in the repository, then applied and followed to its end on the page.
    const change = page.getByRole('form', { name: 'Change the install' });
    assert.equal(await change.getByRole('button', { name: 'Apply and render' }).count(), 0, 'nothing to apply before a change');
    await change.getByLabel('replicas', { exact: true }).fill('5');
    assert.ok(await change.getByRole('button', { name: 'Apply and render' }).isDisabled(), 'a change is previewed before it is applied');
    await change.getByRole('button', { name: 'Preview the change' }).click();
    const diff = change.getByRole('group', { name: 'What the render would change' });
    await diff.waitFor();
    assert.match(await diff.innerText(), /1 of 2 files would change/);
    const appYaml = diff.getByRole('region', { name: 'app.yaml (changed)' });
    assert.match(await appYaml.innerText(), /- replicas: 3\n\+ replicas: 5/);
    await shot(page, 'install-change-preview');
    await change.getByRole('button', { name: 'Apply and render' }).click();
    await history.nth(1).waitFor();
    await history.first().getByText('succeeded').waitFor({ timeout: 30_000 });
    await page
      .getByRole('status')
      .filter({ hasText: /done\./ })
      .waitFor();
    assert.equal(await history.count(), 2);
    const [second] = (await site.api('GET', `/v1/installs/${installId}/renders`)).data;
    assert.equal(second.state, 'succeeded');

    // The files of each commit, as git has them.
    await history.first().getByRole('button', { name: 'Files' }).click();
    const files = page.getByRole('group', { name: `Files of commit ${second.commit_sha.slice(0, 10)}` });
    await files.getByRole('button', { name: 'app.yaml' }).click();
    assert.equal(await files.getByLabel('Content of app.yaml').innerText(), 'replicas: 5\nname: shop\n');
    await shot(page, 'install');

    // Restore the first render, confirmed; its operation is followed until done.
    await history.nth(1).getByRole('button', { name: 'Restore' }).click();
    await page.getByRole('dialog', { name: 'Restore this render?' }).getByRole('button', { name: 'Restore' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /restore: done\./ })
      .waitFor({ timeout: 30_000 });
    await history.nth(2).waitFor();
    await history.first().getByText('succeeded').waitFor();
    const renders = (await site.api('GET', `/v1/installs/${installId}/renders`)).data;
    assert.equal(renders[0].restored_from_render_id, first.id);
    assert.equal(renders[0].state, 'succeeded');
    const head = await site.api('GET', `/v1/installs/${installId}/repository`);
    assert.equal(head.head_commit_sha, renders[0].commit_sha);
    await page.getByText(`restored from ${first.id}`).waitFor();

    // An upgrade: a newer version chosen, its rendered diff previewed (a file added), applied.
    const newer = await site.api('POST', `/v1/packages/${pkg.id}/versions`, {
      semver: '1.1.0',
      files: { 'app.yaml': 'replicas: {{replicas}}\nname: {{name}}\n', 'README.md': 'Deployed {{name}}\n', 'NOTES.md': 'New in 1.1 for {{name}}\n' },
    });
    await page.reload();
    await change.getByLabel('Version', { exact: true }).selectOption({ label: '1.1.0' });
    await change.getByRole('button', { name: 'Preview the change' }).click();
    await diff.getByRole('region', { name: 'NOTES.md (added)' }).waitFor();
    assert.match(await diff.innerText(), /1 of 3 files would change/);
    await change.getByRole('button', { name: 'Apply and render' }).click();
    await waitFor('the upgrade to render', async () => (await site.api('GET', `/v1/installs/${installId}`)).current_version?.id === newer.id || null, { timeoutMs: 30_000 });
    // The page has the install as the render left it (its etag too) once it shows the version in use.
    await page
      .locator('dl.facts dd')
      .filter({ hasText: /^1\.1\.0$/ })
      .waitFor({ timeout: 30_000 });
    // Automatic updates alone renders nothing: applied without a preview.
    await change.getByLabel(/Update automatically/).check();
    await change.getByRole('button', { name: 'Apply', exact: true }).click();
    await waitFor('automatic updates to be on', async () => (await site.api('GET', `/v1/installs/${installId}`)).automatic_updates_enabled === true || null);

    // Values that render past the output quota: the preview says so, and nothing can be applied.
    await change.getByLabel('name', { exact: true }).fill('x'.repeat(5000));
    await change.getByRole('button', { name: 'Preview the change' }).click();
    await change.getByRole('alert').waitFor();
    assert.ok(await change.getByRole('button', { name: 'Apply and render' }).isDisabled());
    // Applied all the same (from the API): the render fails and the page says why.
    const now = await site.api('GET', `/v1/installs/${installId}`);
    const headBefore = (await site.api('GET', `/v1/installs/${installId}/repository`)).head_commit_sha;
    await site.api('PATCH', `/v1/installs/${installId}`, { values: { replicas: 1, name: 'x'.repeat(5000) } }, { headers: { 'if-match': `"${now.etag}"` } });
    await page.reload();
    await history.first().getByText('failed').waitFor({ timeout: 30_000 });
    await history.first().getByText('failed').waitFor();
    const [failed] = (await site.api('GET', `/v1/installs/${installId}/renders`)).data;
    assert.equal(failed.state, 'failed');
    assert.match(await history.first().innerText(), new RegExp(failed.message.slice(0, 30).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.equal((await site.api('GET', `/v1/installs/${installId}/repository`)).head_commit_sha, headBefore, 'a failed render moves nothing');

    await page.setViewportSize({ width: 390, height: 800 });
    await assertFits(page);
    await shot(page, 'install-390');
    await page.setViewportSize({ width: 1280, height: 900 });

    // The package cannot go while the install uses it: the refusal names the install.
    await page.goto(`${site.url}/console/packages/${pkg.id}`);
    await page.getByRole('button', { name: 'Delete package' }).click();
    const packageDialog = page.getByRole('dialog', { name: 'Delete web?' });
    await packageDialog.getByRole('textbox').fill('web');
    await packageDialog.getByRole('button', { name: 'Delete package' }).click();
    assert.match(await page.getByRole('alert').filter({ hasText: installId }).innerText(), /use a version of the package: delete them first/);
    // The install goes first, its name typed; the page lands on the list, and the API reads 404.
    await page.goto(`${site.url}/console/installs/${installId}`);
    await page.getByRole('button', { name: 'Delete install' }).click();
    const installDialog = page.getByRole('dialog', { name: 'Delete shop?' });
    await installDialog.getByRole('textbox').fill('shop');
    await installDialog.getByRole('button', { name: 'Delete install' }).click();
    await page.getByRole('heading', { name: 'Installs', level: 1 }).waitFor();
    assert.equal((await site.fetch('GET', `/v1/installs/${installId}`)).status, 404);
    // Then the package.
    await page.goto(`${site.url}/console/packages/${pkg.id}`);
    await page.getByRole('button', { name: 'Delete package' }).click();
    await packageDialog.getByRole('textbox').fill('web');
    await packageDialog.getByRole('button', { name: 'Delete package' }).click();
    await page.getByRole('heading', { name: 'Packages', level: 1 }).waitFor();
    assert.equal((await site.fetch('GET', `/v1/packages/${pkg.id}`)).status, 404);
  });
  await w.done();
});
