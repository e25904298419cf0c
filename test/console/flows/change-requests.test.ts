import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { chromiumMissing } from '../../helpers/chromium.js';
import { waitFor } from '../../helpers/wait.js';
import { assertFits, PASSWORD, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * Repository change requests in the console (issue 51, point 3; docs/spec-gaps.md, "Repository
 * change requests"): an install whose renders wait for review says so and links its open change
 * request; the change request's page shows its files side by side; its author cannot approve it
 * (and is told why), a second member approves it in their own browser, and the merge moves the
 * install's main. A closed one is reopened, and each refusal (a merge with too few approvals, a
 * change request a newer render superseded) is said in words.
 */
const noChromium = chromiumMissing('console change requests');
let site: ConsoleSite;
let installId: string;
let firstHead: string;
const REVIEWER = 'reviewer@example.com';
const VIEWER = 'viewer@example.com';

before(async () => {
  if (noChromium) return;
  site = await startConsoleSite();
  const { user_id } = await site.admin.createUser({ name: 'The reviewer', email: REVIEWER });
  await site.admin.setPassword(user_id, PASSWORD);
  await site.admin.addMember(site.owner.workspace_id, user_id, 'member');
  const viewer = await site.admin.createUser({ name: 'The viewer', email: VIEWER });
  await site.admin.setPassword(viewer.user_id, PASSWORD);
  await site.admin.addMember(site.owner.workspace_id, viewer.user_id, 'viewer');
  const pkg = await site.api<{ id: string }>('POST', '/v1/packages', { name: 'web' });
  const v1 = await site.api<{ id: string }>('POST', `/v1/packages/${pkg.id}/versions`, {
    semver: '1.0.0',
    files: { 'app.yaml': 'replicas: {{replicas}}\nname: {{name}}\nport: 80\n', 'README.md': 'Deployed {{name}}\n' },
  });
  await site.api('POST', `/v1/packages/${pkg.id}/versions`, {
    semver: '1.1.0',
    files: { 'app.yaml': 'replicas: {{replicas}}\nname: {{name}}\nport: 8080\n', 'NOTES.md': 'New in 1.1 for {{name}}\n' },
  });
  const install = await site.api<{ id: string }>('POST', '/v1/installs', {
    name: 'shop',
    package_id: pkg.id,
    version_id: v1.id,
    values: { replicas: 2, name: 'shop' },
    delivery: 'change_request',
    required_approvals: 1,
  });
  installId = install.id;
  // The first render lands on main directly: an empty repository has nothing to review.
  firstHead = await waitFor('the first render to land', async () => (await site.api('GET', `/v1/installs/${installId}/repository`)).head_commit_sha as string | null, { timeoutMs: 30_000 });
});
after(() => site?.close());

const head = async () => (await site.api('GET', `/v1/installs/${installId}/repository`)).head_commit_sha as string;
const install = () => site.api('GET', `/v1/installs/${installId}`);
/** The open change request of the install, once a render has opened it. */
const openChange = (not?: string) =>
  waitFor(
    'a change request to open',
    async () => {
      const id = (await install()).open_change_request_id as string | null;
      return id && id !== not ? site.api('GET', `/v1/repository_change_requests/${id}`) : null;
    },
    { timeoutMs: 30_000 },
  );
/** The install's settings changed from the API, as another person would (If-Match with the etag now). */
async function patchInstall(body: Record<string, unknown>) {
  const now = await install();
  return site.api('PATCH', `/v1/installs/${installId}`, body, { headers: { 'if-match': `"${now.etag}"` } });
}
const approveButton = (page: Page) => page.getByRole('main').getByRole('button', { name: 'Approve', exact: true });

test('a render opens a change request; its author cannot approve it, a second member does, and the merge moves main', { skip: noChromium }, async () => {
  const owner = await site.signedIn();
  const { page } = owner;
  await walk(page, 'change-request-merge', async () => {
    await page.goto(`${site.url}/console/installs/${installId}`);
    await page.getByRole('heading', { name: 'shop', level: 1 }).waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /each render waits for review as a change request \(1 approval required\)/);
    const form = page.getByRole('form', { name: 'Change the install' });
    assert.equal(await form.getByLabel('Delivery').inputValue(), 'change_request');
    assert.equal(await form.getByLabel('Approvals required').inputValue(), '1');

    // An upgrade from the install's form: previewed, applied, and then it waits for review.
    await form.getByLabel('Version', { exact: true }).selectOption({ label: '1.1.0' });
    await form.getByRole('button', { name: 'Preview the change' }).click();
    await form.getByRole('group', { name: 'What the render would change' }).waitFor();
    await form.getByText('Its render will wait for review as a change request').waitFor();
    await form.getByRole('button', { name: 'Apply and render' }).click();
    const waiting = page.getByRole('status').filter({ hasText: 'A change waits for review before it reaches main' });
    await waiting.getByRole('link', { name: 'change request #1: Update shop to 1.1.0' }).waitFor({ timeout: 30_000 });
    assert.match(await waiting.innerText(), /needs 1 more approval/);
    // The render waits, in words; main and the version in use have not moved.
    const newest = page.locator('.timeline > li').first();
    await newest.getByText('awaiting merge', { exact: true }).waitFor();
    await newest.getByText('not on main until its change request is merged').waitFor();
    assert.equal(await head(), firstHead, 'main waits for the merge');
    assert.equal((await install()).current_version.semver, '1.0.0');
    await page.getByRole('navigation', { name: 'Install' }).getByRole('link', { name: 'Changes (1 open)' }).waitFor();

    // The change request's page: state, author, commits, the ref to fetch, and the files side by side.
    await waiting.getByRole('link').click();
    await page.getByRole('heading', { name: '#1 Update shop to 1.1.0', level: 1 }).waitFor();
    const cr = await openChange();
    assert.equal(new URL(page.url()).pathname, `/console/installs/${installId}/changes/${cr.id}`);
    // The author is named once the workspace's members are read.
    await page
      .locator('dl.facts dd')
      .getByText(/^Owner, /)
      .waitFor();
    const facts = await page.locator('dl.facts').innerText();
    assert.match(facts, /Author\s+Owner/);
    assert.match(facts, new RegExp(`Base\\s+${firstHead.slice(0, 10)}`));
    assert.match(facts, new RegExp(`Head\\s+${cr.head_commit_sha.slice(0, 10)}`));
    assert.match(facts, /git fetch origin refs\/changes\/1 && git diff main FETCH_HEAD/);
    assert.match(facts, /1 added, 1 modified, 1 removed/);
    assert.match(facts, /Approvals\s+none yet/);
    const files = page.getByRole('group', { name: 'Files changed' });
    const appYaml = files.getByRole('region', { name: 'app.yaml (modified)' });
    await appYaml.waitFor();
    assert.deepEqual(await appYaml.locator('td.del').allInnerTexts(), ['port: 80']);
    assert.deepEqual(await appYaml.locator('td.ins').allInnerTexts(), ['port: 8080']);
    const notes = files.getByRole('region', { name: 'NOTES.md (added)' });
    assert.equal(await notes.locator('td.absent').innerText(), 'absent: the file is new');
    assert.deepEqual(await notes.locator('td.ins').allInnerTexts(), ['New in 1.1 for shop']);
    const readme = files.getByRole('region', { name: 'README.md (removed)' });
    assert.equal(await readme.locator('td.absent').innerText(), 'absent: the file is removed');
    assert.deepEqual(await readme.locator('td.del').allInnerTexts(), ['Deployed shop']);

    // Its author has no usable Approve, and is told why; the merge waits for an approval.
    assert.ok(await approveButton(page).isDisabled(), "the author's Approve is disabled");
    assert.equal(await approveButton(page).getAttribute('aria-describedby'), 'approve-why');
    assert.match(await page.locator('#approve-why').innerText(), /You opened this change, so you cannot approve it: another member must/);
    assert.ok(await page.getByRole('button', { name: 'Merge', exact: true }).isDisabled());
    assert.match(await page.locator('#merge-why').innerText(), /Merging waits: needs 1 more approval/);

    // The title and description, edited (If-Match).
    await page.getByRole('button', { name: 'Edit title and description' }).click();
    const edit = page.getByRole('form', { name: 'Edit the change request' });
    await edit.getByLabel('Title').fill('Upgrade shop to 1.1.0');
    await edit.getByLabel('Description').fill('Port 8080, as ops asked.\nNOTES.md added.');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: '#1 Upgrade shop to 1.1.0', level: 1 }).waitFor();
    await page.getByText('Port 8080, as ops asked.').waitFor();
    assert.equal((await site.api('GET', `/v1/repository_change_requests/${cr.id}`)).description, 'Port 8080, as ops asked.\nNOTES.md added.');
    await shot(page, 'change-request');

    // A second member, in a browser of their own, approves it.
    const reviewer = await site.signedIn({ email: REVIEWER });
    await walk(reviewer.page, 'change-request-approve', async () => {
      await reviewer.page.goto(`${site.url}/console/installs/${installId}/changes/${cr.id}`);
      await reviewer.page.getByRole('heading', { name: '#1 Upgrade shop to 1.1.0', level: 1 }).waitFor();
      assert.equal(await reviewer.page.getByRole('button', { name: 'Merge', exact: true }).isDisabled(), true, 'not mergeable before the approval');
      await approveButton(reviewer.page).click();
      await reviewer.page.getByRole('status').filter({ hasText: 'You approved it.' }).waitFor();
      await reviewer.page.locator('ul.approvals').getByText('The reviewer (you)').waitFor();
      assert.equal(await approveButton(reviewer.page).count(), 0, 'approved once: no second Approve');
    });
    await reviewer.done();
    const approved = await site.api('GET', `/v1/repository_change_requests/${cr.id}`);
    assert.equal(approved.approvals.length, 1);
    assert.equal(approved.mergeable, true);

    // The author sees the approval and merges: main moves to the change request's head.
    await page.reload();
    await page.locator('ul.approvals').getByText('The reviewer').waitFor();
    await page.getByText('ready to merge').first().waitFor();
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    await page.getByRole('dialog', { name: 'Merge change request #1?' }).getByRole('button', { name: 'Merge into main' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Merged: main is at ${approved.head_commit_sha.slice(0, 10)} now.` })
      .waitFor();
    await page.getByText('merged into main').first().waitFor();
    assert.equal(await head(), approved.head_commit_sha, 'main moved to the head');
    const installed = await install();
    assert.equal(installed.current_version.semver, '1.1.0');
    assert.equal(installed.open_change_request_id, null);
    const merged = await site.api('GET', `/v1/repository_change_requests/${cr.id}`);
    assert.equal(merged.state, 'merged');
    assert.equal(merged.merged_by, site.owner.user_id);
    assert.equal((await site.api('GET', `/v1/renders/${merged.render_id}`)).state, 'succeeded');
    assert.equal(await page.getByRole('button', { name: 'Merge', exact: true }).count(), 0);

    // The Changes tab lists it, with where it stands.
    await page.getByRole('navigation', { name: 'Install' }).getByRole('link', { name: 'Changes' }).click();
    await page.getByRole('heading', { name: 'Changes', level: 1 }).waitFor();
    const row = page.getByRole('list', { name: 'Change requests' }).getByRole('listitem').first();
    await row.getByRole('link', { name: '#1 Upgrade shop to 1.1.0' }).waitFor();
    assert.match(await row.innerText(), /merged into main/);
    await page.setViewportSize({ width: 360, height: 800 });
    await assertFits(page);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
  await owner.done();
});

test('close and reopen a change request; a merge with too few approvals and a superseded change are refused in words', { skip: noChromium }, async () => {
  await patchInstall({ values: { replicas: 3, name: 'shop' } });
  const cr = await openChange();
  assert.equal(cr.number, 2);
  const owner = await site.signedIn();
  const { page } = owner;
  const crUrl = `${site.url}/console/installs/${installId}/changes/${cr.id}`;
  await walk(page, 'change-request-close', async () => {
    await page.goto(crUrl);
    await page.getByRole('heading', { name: `#2 ${cr.title}`, level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await page.getByRole('dialog', { name: 'Close change request #2 without merging?' }).getByRole('button', { name: 'Close without merging' }).click();
    await page.getByRole('status').filter({ hasText: 'Closed: its render is canceled and main stays where it was.' }).waitFor();
    await page.getByRole('button', { name: 'Reopen' }).waitFor();
    const closed = await site.api('GET', `/v1/repository_change_requests/${cr.id}`);
    assert.equal(closed.state, 'closed');
    assert.equal((await site.api('GET', `/v1/renders/${cr.render_id}`)).state, 'canceled');
    const mainNow = await head();

    // The install's history says the render was called off; the Changes tab says the change request is closed.
    await page.goto(`${site.url}/console/installs/${installId}`);
    await page.getByRole('heading', { name: 'shop', level: 1 }).waitFor();
    const newest = page.locator('.timeline > li').first();
    await newest.getByText('canceled', { exact: true }).waitFor();
    await newest.getByText('never reached main: its change request was closed').waitFor();
    assert.equal(await page.getByRole('status').filter({ hasText: 'A change waits for review' }).count(), 0);
    await page.goto(`${site.url}/console/installs/${installId}/changes?state=closed`);
    const row = page.getByRole('list', { name: 'Change requests' }).getByRole('listitem');
    await row.getByRole('link', { name: `#2 ${cr.title}` }).waitFor();
    assert.equal(await row.count(), 1, 'only the closed one');
    assert.match(await row.innerText(), /needs 1 more approval, closed/);

    // Reopened: it waits for review again, and its render with it.
    await row.getByRole('link').click();
    await page.getByRole('button', { name: 'Reopen' }).click();
    await page.getByRole('status').filter({ hasText: 'Reopened: it waits for review again.' }).waitFor();
    await page.getByRole('button', { name: 'Close', exact: true }).waitFor();
    assert.equal((await site.api('GET', `/v1/repository_change_requests/${cr.id}`)).state, 'open');
    assert.equal((await site.api('GET', `/v1/renders/${cr.render_id}`)).state, 'awaiting_merge');

    // A merge the page thought possible, refused: the install came to want two approvals meanwhile.
    await patchInstall({ required_approvals: 0 });
    await page.reload();
    await page.getByText('ready to merge').first().waitFor();
    await patchInstall({ required_approvals: 2 });
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    await page.getByRole('dialog', { name: 'Merge change request #2?' }).getByRole('button', { name: 'Merge into main' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'The merge was refused' });
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /The merge was refused \(needs 2 more approvals\), so main did not move/);
    assert.equal(await head(), mainNow, 'a refused merge moves nothing');
    // The page reloaded its version: the Merge now waits, and says for what.
    await page.locator('#merge-why').filter({ hasText: 'Merging waits: needs 2 more approvals' }).waitFor();
    assert.ok(await page.getByRole('button', { name: 'Merge', exact: true }).isDisabled());
    await shot(page, 'change-request-refused');
  });
  await owner.done();

  // A second member's page of #2, stale once a newer render supersedes it: their approval is refused in words.
  const reviewer = await site.signedIn({ email: REVIEWER });
  await walk(reviewer.page, 'change-request-superseded', async () => {
    await reviewer.page.goto(crUrl);
    await approveButton(reviewer.page).waitFor();
    await patchInstall({ values: { replicas: 4, name: 'shop' } });
    const newer = await openChange(cr.id);
    assert.equal((await site.api('GET', `/v1/repository_change_requests/${cr.id}`)).state, 'superseded');
    await approveButton(reviewer.page).click();
    await reviewer.page.getByRole('alert').filter({ hasText: 'A newer render superseded this change after you opened it, so the approval was not done.' }).waitFor();
    await reviewer.page.getByText('superseded by a newer render').first().waitFor();
    assert.equal(await approveButton(reviewer.page).count(), 0, 'nothing to approve on a superseded change request');
    assert.equal((await site.api('GET', `/v1/repository_change_requests/${cr.id}`)).approvals.length, 0);
    // The page points to the change request that superseded it.
    await reviewer.page.getByRole('link', { name: `change request #${newer.number}` }).click();
    await reviewer.page.getByRole('heading', { name: `#${newer.number} ${newer.title}`, level: 1 }).waitFor();
  });
  await reviewer.done();

  // A viewer reads the change request and acts on nothing: no Approve, Merge, Close or Edit is drawn.
  const viewer = await site.signedIn({ email: VIEWER });
  await walk(viewer.page, 'change-request-viewer', async () => {
    const open = await openChange();
    await viewer.page.goto(`${site.url}/console/installs/${installId}/changes/${open.id}`);
    await viewer.page.getByRole('heading', { name: `#${open.number} ${open.title}`, level: 1 }).waitFor();
    await viewer.page.getByRole('group', { name: 'Files changed' }).waitFor();
    for (const name of ['Approve', 'Merge', 'Close', 'Reopen', 'Edit title and description'])
      assert.equal(await viewer.page.getByRole('main').getByRole('button', { name, exact: true }).count(), 0, name);
  });
  await viewer.done();
});
