import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromiumMissing } from '../../helpers/chromium.js';
import { assertFits, startConsoleSite, type ConsoleSite } from '../console-site.js';

/**
 * Publishing from the browser (issue 50, point 5): a folder of templates uploaded as a version,
 * by their paths in the folder (`.git` left out, as `wsp packages publish --dir` does), a file
 * that is not text named and left out, a template that does not parse refused at its path.
 */
const noChromium = chromiumMissing('console publish');
let site: ConsoleSite;
let dir: string;
before(async () => {
  if (noChromium) return;
  site = await startConsoleSite();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-publish-'));
  const folder = path.join(dir, 'web');
  fs.mkdirSync(path.join(folder, 'config'), { recursive: true });
  fs.mkdirSync(path.join(folder, '.git'));
  fs.writeFileSync(path.join(folder, 'README.md'), 'Deployed {{name}}\n');
  fs.writeFileSync(path.join(folder, 'config', 'app.yaml'), 'replicas: {{replicas}}\n');
  fs.writeFileSync(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  fs.writeFileSync(path.join(folder, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0x80]));
});
after(async () => {
  await site?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('a folder published as a version from the package page; a template that does not parse is refused at its path', { skip: noChromium }, async () => {
  const pkg = await site.api<{ id: string }>('POST', '/v1/packages', { name: 'web' });
  const w = await site.signedIn();
  const { page } = w;
  await page.goto(`${site.url}/console/packages/${pkg.id}`);
  await page.getByText('No versions yet. Publish the first below').waitFor();
  assert.equal(await page.getByLabel('Version', { exact: true }).inputValue(), '1.0.0', 'a first version is offered as 1.0.0');
  await page.getByLabel('A folder of templates').setInputFiles(path.join(dir, 'web'));
  const listed = page.getByRole('list', { name: 'Files to publish' });
  await listed.waitFor();
  assert.deepEqual(
    (await listed.getByRole('listitem').allInnerTexts()).map((t) => t.trim()),
    ['README.md', 'config/app.yaml'],
  );
  assert.match(await page.getByRole('status').filter({ hasText: 'files to publish' }).innerText(), /2 files to publish; left out, not UTF-8 text: logo\.png/);
  await assertFits(page);
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByRole('heading', { name: 'Templates' }).waitFor();
  const versions = await site.api<{ data: { id: string; semver: string }[] }>('GET', `/v1/packages/${pkg.id}/versions`);
  assert.deepEqual(
    versions.data.map((v) => v.semver),
    ['1.0.0'],
  );
  const stored = await site.api<{ files: Record<string, string> }>('GET', `/v1/packages/${pkg.id}/versions/${versions.data[0]!.id}`);
  assert.deepEqual(stored.files, { 'README.md': 'Deployed {{name}}\n', 'config/app.yaml': 'replicas: {{replicas}}\n' });
  await page.waitForURL(new RegExp(`version=${versions.data[0]!.id}`));

  // The next is offered as 1.0.1; a broken template is refused at its path, and nothing is made.
  await page.getByLabel('Version', { exact: true }).waitFor();
  assert.equal(await page.getByLabel('Version', { exact: true }).inputValue(), '1.0.1');
  await page.getByLabel('Or single files').setInputFiles([{ name: 'broken.txt', mimeType: 'text/plain', buffer: Buffer.from('{{#open}} never closed\n') }]);
  await page.getByRole('button', { name: 'Publish' }).click();
  const refusal = page.getByRole('alert').filter({ hasText: 'broken.txt' });
  await refusal.waitFor();
  await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'alert');
  assert.equal((await site.api<{ data: unknown[] }>('GET', `/v1/packages/${pkg.id}/versions`)).data.length, 1);
  await w.done();
});
