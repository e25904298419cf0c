import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumMissing } from '../../helpers/chromium.js';
import { assertAria, assertFits, shot, startConsoleSite, walk, type ConsoleSite } from '../console-site.js';

/**
 * Secrets in the console (issue 19, flow 3): list and create, a version pasted and one from a
 * file, states, enable / disable, destroy confirmed by typing the name, a payload revealed only
 * on demand and recorded as an access.
 */
const noChromium = chromiumMissing('console secrets');
let site: ConsoleSite;
before(async () => {
  if (!noChromium) site = await startConsoleSite();
});
after(() => site?.close());

test('create a secret, add versions, reveal one, disable and enable, destroy with the name typed', { skip: noChromium }, async () => {
  const w = await site.signedIn();
  const { page } = w;
  await walk(page, 'secrets', async () => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Secrets' }).click();
    await page.getByText('No secrets yet').waitFor();
    await assertAria(page, ['heading "Secrets" [level=1]', 'heading "New secret" [level=2]', 'textbox "Name"', 'button "Create secret"']);

    await page.getByLabel('Name').fill('DATABASE_URL');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('heading', { name: 'DATABASE_URL', level: 1 }).waitFor();
    await page.getByText('No versions yet').waitFor();
    const secretId = new URL(page.url()).pathname.split('/').pop()!;

    // A second secret of the same name: the API's 409 shown at the field, nothing made.
    await page.goto(`${site.url}/console/secrets`);
    await page.getByLabel('Name').fill('DATABASE_URL');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page
      .locator('#f-secret-name-error')
      .filter({ hasText: /already has a secret/ })
      .waitFor();
    assert.equal((await site.api('GET', '/v1/secrets')).data.length, 1);
    await page.getByRole('link', { name: 'DATABASE_URL' }).click();

    await page.getByLabel('Value').fill('postgres://db.internal/app');
    await page.getByLabel('Comment (optional)').fill('first');
    await page.getByRole('button', { name: 'Add version' }).click();
    await page.getByText('Version 1', { exact: true }).waitFor();
    // Never shown by default: the value is nowhere on the page.
    assert.equal(await page.getByText('postgres://db.internal/app').count(), 0);
    await page.getByLabel('Or a file').setInputFiles({ name: 'url.txt', mimeType: 'text/plain', buffer: Buffer.from('postgres://db.internal/v2\n') });
    await page.getByRole('button', { name: 'Add version' }).click();
    await page.getByText('Version 2', { exact: true }).waitFor();
    await assertAria(page, ['button "Reveal version 1"', 'button "Disable version 2"', 'button "Destroy version 1"', 'textbox "Value"']);

    // Reveal: the payload, and an access in the audit log.
    const before = (await site.api('GET', '/v1/audit_events?type=secret_version.accessed')).data.length;
    await page.getByRole('button', { name: 'Reveal version 2' }).click();
    await page.getByLabel('Value of version 2').getByText('postgres://db.internal/v2').waitFor();
    const after = (await site.api('GET', '/v1/audit_events?type=secret_version.accessed')).data;
    assert.equal(after.length, before + 1);
    assert.equal(after[0].actor.id, site.owner.user_id);
    await page.getByRole('button', { name: 'Hide' }).click();
    assert.equal(await page.getByText('postgres://db.internal/v2').count(), 0);
    await shot(page, 'secret');

    await page.getByRole('button', { name: 'Disable version 1' }).click();
    await page.getByRole('button', { name: 'Enable version 1' }).waitFor();
    const versions = (await site.api('GET', `/v1/secrets/${secretId}/versions`)).data as { version_number: number; state: string }[];
    assert.deepEqual(
      versions.map((v) => [v.version_number, v.state]),
      [
        [2, 'enabled'],
        [1, 'disabled'],
      ],
    );
    assert.equal(await page.getByRole('button', { name: 'Reveal version 1' }).count(), 0, 'a disabled version cannot be revealed');
    await page.getByRole('button', { name: 'Enable version 1' }).click();
    await page.getByRole('button', { name: 'Disable version 1' }).waitFor();

    // Destroy: the dialog's button stays off until the name is typed.
    await page.getByRole('button', { name: 'Destroy version 1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Destroy version 1 of DATABASE_URL?' });
    await dialog.waitFor();
    const confirm = dialog.getByRole('button', { name: 'Destroy' });
    assert.ok(await confirm.isDisabled());
    await dialog.getByLabel('Type DATABASE_URL to confirm').fill('DATABASE_UR');
    assert.ok(await confirm.isDisabled());
    await dialog.getByLabel('Type DATABASE_URL to confirm').fill('DATABASE_URL');
    await confirm.click();
    // The state's badge, exactly: the open dialog, drawn in the same row, says "destroyed" too.
    await page.locator('.rows li').filter({ hasText: 'Version 1' }).getByText('destroyed', { exact: true }).waitFor();
    assert.equal((await site.api('GET', `/v1/secrets/${secretId}/versions`)).data[1].state, 'destroyed');

    // Cancel leaves everything as it was.
    await page.getByRole('button', { name: 'Delete secret' }).click();
    await page.getByRole('dialog', { name: 'Delete DATABASE_URL?' }).getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await site.api('GET', '/v1/secrets')).data.length, 1);

    await page.setViewportSize({ width: 390, height: 800 });
    await assertFits(page);
    await shot(page, 'secret-390');
  });
  await w.done();
});
