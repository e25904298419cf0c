import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../../helpers/chromium.js';
import { startServer, type ServerProcess } from '../../helpers/processes.js';
import { publicAddress, type PublicAddress } from '../../helpers/public-address.js';
import { assertFits, shot, walk, watchedPage } from '../console-site.js';

/**
 * The first run in the browser (issue 50, point 10): on a server with no user, its log says
 * "Open <url>/console/ ... with this setup code"; the console then shows the first-run form, not a
 * sign-in nobody can pass. A refused field is said beside it and takes the focus; the right code
 * makes the owner and the workspace and lands, signed in, on that workspace's dashboards. Once
 * done, the console signs in as usual. The walkthrough of issue 50 goes on from there: the owner
 * invites a viewer and a member in the console, each joins by the link, and each sees only the
 * controls their role allows.
 */
const noChromium = chromiumMissing('console first run');
let dir: string;
let server: ServerProcess | undefined;
let addr: PublicAddress | undefined;
let browser: Browser | undefined;
let launching: Promise<Browser> | undefined;

before(async () => {
  if (noChromium) return;
  launching = import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 }));
  launching.catch(() => undefined);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-first-run-'));
  addr = await publicAddress();
  server = await startServer({ WSP_DATA_DIR: dir, WSP_PUBLIC_URL: addr.url });
  addr.forwardTo(server.url);
  browser = await launching;
});
after(async () => {
  const launched = browser ?? (await launching?.catch(() => undefined));
  await launched?.close().catch(() => undefined);
  await server?.stop('SIGTERM', 5_000);
  await addr?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test(
  "a server with no user: its log's console address shows the first-run form; refusals beside their fields, with focus; the owner lands on the workspace's dashboards, invites a viewer and a member, and each sees only the controls their role allows",
  { skip: noChromium },
  async () => {
    const logged = server!.output
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; setup_code?: string })
      .find((l) => l.setup_code);
    assert.ok(logged, `a setup code in the log:\n${server!.output.join('\n')}`);
    const consoleUrl = /Open (\S+\/console\/)/.exec(logged.msg ?? '')?.[1];
    assert.equal(consoleUrl, `${addr!.url}/console/`, 'the log names the console to open');

    // A phone's width: the form fits it.
    const w = await watchedPage(browser!, new URL(addr!.url).origin, { width: 360, height: 780 });
    const { page } = w;
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('name'));
    await walk(page, 'first-run', async () => {
      await page.goto(consoleUrl);
      await page.getByRole('heading', { name: 'Set up Workspace Platform' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Sign in', exact: true }).count(), 0, 'no sign-in form while there is no user');
      await assertFits(page);

      await page.getByLabel('Setup code').fill(logged.setup_code!);
      await page.getByLabel('Your name').fill('Ada Owner');
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill('too short');
      await page.getByLabel('Workspace name').fill('Acme');
      await page.getByRole('button', { name: 'Make the owner and workspace' }).click();
      // The server's words, beside the password, and the focus on it.
      await page.locator('#password-error').waitFor();
      assert.match(await page.locator('#password-error').innerText(), /12/);
      assert.equal(await focused(), 'password');
      assert.equal(await page.getByLabel('Password').getAttribute('aria-invalid'), 'true');

      await page.getByLabel('Password').fill('a long enough password');
      await page.getByLabel('Setup code').fill('AAAA-BBBB-CCCC');
      await page.getByRole('button', { name: 'Make the owner and workspace' }).click();
      await page.locator('#code-error').waitFor();
      assert.match(await page.locator('#code-error').innerText(), /setup code/i);
      assert.equal(await focused(), 'code');
      assert.equal(await page.locator('#password-error').count(), 0, 'the password is no longer refused');
      await shot(page, 'first-run-refused');

      await page.getByLabel('Setup code').fill(` ${logged.setup_code!} `);
      await page.getByRole('button', { name: 'Make the owner and workspace' }).click();
      await page.getByRole('heading', { name: 'Dashboards in Acme' }).waitFor();
      await assertFits(page);
      await shot(page, 'first-run-done');
    });
    await w.done();

    // Done once: the API says so, and a new visitor gets the sign-in form.
    const state = await (await fetch(`${server!.url}/v1/setup`)).json();
    assert.deepEqual(state, { required: false });
    const again = await watchedPage(browser!, new URL(addr!.url).origin);
    await again.page.goto(`${addr!.url}/console/`);
    await again.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await again.page.getByLabel('Email').fill('ada@example.com');
    await again.page.getByLabel('Password').fill('a long enough password');
    await again.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await again.page.getByRole('heading', { name: 'Dashboards in Acme' }).waitFor();

    // The walkthrough goes on: the owner invites a viewer and a member, each joins by the link,
    // and each sees only the controls their role allows.
    const owner = again.page;
    await owner.goto(`${addr!.url}/console/secrets`);
    await owner.getByLabel('Name', { exact: true }).fill('API_KEY');
    await owner.getByRole('button', { name: 'Create secret' }).click();
    await owner.getByRole('heading', { name: 'API_KEY', level: 1 }).waitFor();
    const links: Record<string, string> = {};
    for (const role of ['viewer', 'member'] as const) {
      await owner.goto(`${addr!.url}/console/admin/members`);
      await owner.getByLabel('Email').fill(`${role}@example.com`);
      await owner.getByLabel('Role', { exact: true }).selectOption(role);
      await owner.getByRole('button', { name: 'Invite' }).click();
      links[role] = await owner.locator('.secret-value').innerText();
      assert.match(links[role], /\/console\/invite#/);
      await owner.getByRole('button', { name: 'Done' }).click();
    }
    await shot(owner, 'walkthrough-invitations');
    await again.done();

    const seen: Record<string, Record<string, boolean>> = {};
    for (const role of ['viewer', 'member'] as const) {
      const guest = await watchedPage(browser!, new URL(addr!.url).origin);
      const p = guest.page;
      await p.goto(links[role]!);
      await p.getByRole('heading', { name: 'Join the workspace' }).waitFor();
      await p.getByLabel('Your name').fill(`The ${role}`);
      await p.getByLabel('Password').fill('a long enough password');
      await p.getByRole('button', { name: 'Accept invitation' }).click();
      await p.getByRole('heading', { name: 'Dashboards in Acme' }).waitFor();
      const nav = p.getByRole('navigation', { name: 'Areas' });
      const has = async (role: 'button' | 'link', name: string, scope = p.locator('main')) => (await scope.getByRole(role, { name, exact: true }).count()) > 0;
      const mine: Record<string, boolean> = {};
      mine['nav Webhooks'] = await has('link', 'Webhooks', nav);
      mine['nav API tokens'] = await has('link', 'API tokens', nav);
      await p.goto(`${addr!.url}/console/secrets`);
      await p.getByRole('link', { name: 'API_KEY' }).waitFor();
      mine['create secret'] = await has('button', 'Create secret');
      await p.getByRole('link', { name: 'API_KEY' }).click();
      await p.getByRole('heading', { name: 'API_KEY', level: 1 }).waitFor();
      mine['add version'] = await has('button', 'Add version');
      mine['delete secret'] = await has('button', 'Delete secret');
      await p.goto(`${addr!.url}/console/admin/members`);
      await p.getByRole('cell', { name: 'ada@example.com' }).waitFor();
      mine['invite'] = await has('button', 'Invite');
      mine['role selects'] = (await p.getByRole('combobox', { name: /^Role of / }).count()) > 0;
      await assertFits(p);
      await shot(p, `walkthrough-${role}`);
      seen[role] = mine;
      await guest.done();
    }
    const none = { 'nav Webhooks': false, 'nav API tokens': false, 'delete secret': false, invite: false, 'role selects': false };
    assert.deepEqual(seen['viewer'], { ...none, 'create secret': false, 'add version': false }, 'a viewer reads and changes nothing');
    assert.deepEqual(seen['member'], { ...none, 'create secret': true, 'add version': true }, 'a member writes, but takes no irreversible or workspace-wide action');
  },
);
