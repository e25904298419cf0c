import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { SHOTS, walk, watchedPage } from './console-site.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { notify } from '../../src/notifications/service.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../helpers/chromium.js';

/**
 * The web console (docs/spec-gaps.md, "Platform metrics and the console", issue 19) in Debian's headless Chromium against a real `wsp
 * serve`: signing in with a password, the dashboards of the workspace, switching workspace,
 * reloading a view, the inbox's badge kept live by the notification stream, marking a notice
 * read, signing out. Every request must stay on the console's origin and the page
 * must raise no Content-Security-Policy violation. Screenshots go to test-output/console/.
 */
const noChromium = chromiumMissing('console-browser');

const EMAIL = 'console-owner@example.com';
const PASSWORD = 'the console password';
let tdb: TestDatabase;
let server: ServerProcess | undefined;
let publicAddr: PublicAddress | undefined;
let browser: Browser | undefined;
/** Started first; `after` closes it even if `before` failed. */
let launching: Promise<Browser> | undefined;
let boot: { workspace_id: string; user_id: string; session_token: string };
let second: string;

before(async () => {
  if (noChromium) return;
  launching = import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 }));
  launching.catch(() => undefined);
  tdb = await openTestDatabase();
  const admin = createAdminService(tdb.database.db, systemClock);
  boot = await admin.bootstrap({ email: EMAIL, password: PASSWORD });
  publicAddr = await publicAddress();
  server = await startServer({ ...tdb.env, WSP_PUBLIC_URL: publicAddr.url });
  publicAddr.forwardTo(server.url);
  const call = async (method: string, url: string, body: unknown, workspace?: string) => {
    const res = await fetch(`${server!.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${boot.session_token}`, 'content-type': 'application/json', ...(workspace ? { 'service-context': workspace } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${url}: ${res.status} ${text}`);
    return JSON.parse(text) as { id: string };
  };
  await call('POST', '/v1/dashboards', { name: 'Errors by service', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] }, boot.workspace_id);
  second = (await call('POST', '/v1/workspaces', { name: 'Second team' })).id;
  await call('POST', '/v1/dashboards', { name: 'Second team board', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] }, second);
  browser = await launching;
  fs.mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  const launched = browser ?? (await launching?.catch(() => undefined));
  await launched?.close().catch(() => undefined);
  if (server) await server.stop('SIGTERM', 5_000);
  await publicAddr?.close();
  if (tdb) await tdb.cleanup();
});

test('sign in with a password, see the dashboards, switch workspace, reload, sign out; same origin only, no CSP violation', { skip: noChromium }, async () => {
  const w = await watchedPage(browser!, new URL(publicAddr!.url).origin, { width: 1280, height: 800 });
  const { page } = w;
  await walk(page, 'sign-in', async () => {
    const first = await page.goto(`${publicAddr!.url}/console/`);
    assert.match(first!.headers()['content-security-policy'] ?? '', /default-src 'none'; script-src 'self'/);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The sign-in form is drawn as soon as /v1/me says 401; the address follows in an effect after it.
    await page.waitForURL((u) => u.pathname === '/console/sign-in');
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');

    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /email or password/i);

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Dashboards in / }).waitFor();
    await page.getByRole('combobox', { name: 'Workspace' }).selectOption({ value: boot.workspace_id });
    await page.getByRole('cell', { name: 'Errors by service' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/dashboards');
    // The main controls, by role and name, as assistive technology sees them.
    assert.ok(await page.getByRole('combobox', { name: 'Workspace' }).isVisible());
    assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible());
    assert.ok(await page.getByRole('link', { name: 'Workspace Platform' }).isVisible());
    await page.screenshot({ path: path.join(SHOTS, 'dashboards.png'), fullPage: true });

    await page.getByRole('combobox', { name: 'Workspace' }).selectOption({ label: 'Second team' });
    await page.getByRole('cell', { name: 'Second team board' }).waitFor();
    assert.equal(await page.getByRole('cell', { name: 'Errors by service' }).count(), 0, "the other workspace's dashboards are gone");

    await page.reload();
    await page.getByRole('cell', { name: 'Second team board' }).waitFor();

    // The inbox: a notice written by anyone (here straight into the database, as a job would)
    // reaches the badge live through the notification stream, without a reload.
    await page.getByRole('link', { name: 'Notifications, 0 unread' }).waitFor();
    await notify(tdb.database.db, systemClock, {
      userIds: [boot.user_id],
      type: 'machine_expiry',
      resource_type: 'machine',
      resource_id: 'mch_x',
      title: 'Machine web-1 expires in 3 days',
      body: 'Resume it or it is deleted.',
      severity: 'warning',
      context: {},
    });
    await page.getByRole('link', { name: 'Notifications, 1 unread' }).waitFor({ timeout: 10_000 });
    await page.getByRole('link', { name: 'Notifications, 1 unread' }).click();
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/notifications');
    await page.screenshot({ path: path.join(SHOTS, 'notifications.png'), fullPage: true });
    await page.getByRole('button', { name: 'Mark “Machine web-1 expires in 3 days” read' }).click();
    await page.getByRole('link', { name: 'Notifications, 0 unread' }).waitFor();
    const stored = await tdb.database.db.selectFrom('notifications').select('read_at').where('user_id', '=', boot.user_id).execute();
    assert.ok(stored.length === 1 && stored[0]!.read_at !== null, 'marked read on the server (a cookie write with its CSRF token)');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const me = await page.evaluate(async () => (await fetch('/v1/me')).status);
    assert.equal(me, 401, 'the session is over on the server too');

    await page.goto(`${publicAddr!.url}/console/no/such/view`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });
  await w.done();
});

test('assets: hashed names cached for a year; an unknown one is 404; the page is not cached', { skip: noChromium }, async () => {
  const page = await fetch(`${server!.url}/console/dashboards`);
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  const html = await page.text();
  const script = /src="(\/console\/assets\/main-[A-Z0-9]{8}\.js)"/.exec(html)?.[1];
  assert.ok(script, html);
  const asset = await fetch(`${server!.url}${script}`);
  assert.equal(asset.status, 200);
  assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.equal((await fetch(`${server!.url}/console/assets/main-AAAAAAAA.js`)).status, 404);
  assert.equal((await fetch(`${server!.url}/console/assets/..%2Fpackage.json`)).status, 404);
  const root = await fetch(`${server!.url}/`, { redirect: 'manual' });
  assert.equal(root.status, 302);
  assert.equal(root.headers.get('location'), '/console/');
  const bare = await fetch(`${server!.url}/console`, { redirect: 'manual' });
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get('location'), '/console/');
});
