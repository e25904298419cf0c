import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { runWsp, startServer, WSP_BIN, wspEnv, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { registerSecret } from '../helpers/log-scan.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../helpers/chromium.js';

/**
 * The device login as a person does it: `wsp login` in a terminal (a real process), the printed
 * URL opened in a real browser (Debian's headless Chromium driven by playwright-core), the
 * code typed in, Approve clicked, and the terminal's poll completes. Skipped, with the reason
 * printed, only where Chromium is not installed and the run does not require it; `.ci/run`
 * installs it and sets WSP_TEST_REQUIRE_BROWSER=1, so in CI a missing browser fails instead.
 */
const noChromium = chromiumMissing('device-browser');

let tdb: TestDatabase;
let server: ServerProcess | undefined;
/** WSP_PUBLIC_URL: the address the CLI prints and the person opens, forwarded to the server. */
let publicAddr: PublicAddress | undefined;
let browser: Browser | undefined;
/** Started first, alongside the database and server; `after` closes it even if `before` failed. */
let launching: Promise<Browser> | undefined;
let tmp: string;
let keepTmp = false;
let userId: string;
let idp: TestProvider | undefined;
const EMAIL = 'owner@example.com';
const PASSWORD = 'the browser password';
const clis = new Set<ChildProcess>();

before(async () => {
  if (noChromium) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-device-browser-'));
  // Playwright gives every launch a new, empty profile directory (its own --user-data-dir).
  launching = import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 }));
  launching.catch(() => undefined);
  tdb = await openTestDatabase();
  // The first owner as `wsp admin bootstrap --email ... --password-stdin` makes them.
  const boot = await createAdminService(tdb.database.db, systemClock).bootstrap({ email: EMAIL, password: PASSWORD });
  userId = boot.user_id;
  // The public URL is the one the CLI prints and the person opens: it must reach this server,
  // which listens on a port of its own choosing (port 0); the public address forwards to it.
  publicAddr = await publicAddress();
  // A real OpenID provider on loopback: the page's single sign-on goes there and back.
  idp = await startProvider(`${publicAddr.url}/v1/auth/oidc/callback`);
  idp.accounts['sso-owner'] = { email: EMAIL, email_verified: true, name: 'The Owner' };
  server = await startServer({ ...tdb.env, WSP_PUBLIC_URL: publicAddr.url, WSP_OIDC_ISSUER: idp.issuer, WSP_OIDC_CLIENT_ID: idp.clientId, WSP_OIDC_CLIENT_SECRET: idp.clientSecret });
  publicAddr.forwardTo(server.url);
  browser = await launching;
});

after(async () => {
  for (const child of clis) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  const launched = browser ?? (await launching?.catch(() => undefined));
  await launched?.close().catch(() => undefined);
  if (server) await server.stop('SIGTERM', 5_000);
  await publicAddr?.close();
  await idp?.close();
  if (tdb) await tdb.cleanup();
  if (tmp && !keepTmp) fs.rmSync(tmp, { recursive: true, force: true });
});

interface LoginProcess {
  configDir: string;
  /** The URL and code `wsp login` printed, once it has printed them. */
  prompt: Promise<{ uri: string; uriComplete: string; userCode: string }>;
  /** Exit code and output, once the process has ended. */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `wsp login --server URL` as a separate process with its own config directory. */
function startCliLogin(name: string): LoginProcess {
  const configDir = fs.mkdtempSync(path.join(tmp, `${name}-config-`));
  const child = spawn(process.execPath, [WSP_BIN, 'login', '--server', server!.url], {
    env: wspEnv({ WSP_CONFIG_DIR: configDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  clis.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  const prompt = new Promise<{ uri: string; uriComplete: string; userCode: string }>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /To sign in, open (\S+)\nand enter the code: ([A-Z]{4}-[A-Z]{4})\n\(or open (\S+)\)/.exec(stderr);
      if (m) resolve({ uri: m[1]!, userCode: m[2]!, uriComplete: m[3]! });
    });
    child.on('exit', (code) => reject(new Error(`wsp login exited (${code}) before printing a code:\n${stderr}`)));
  });
  prompt.catch(() => undefined);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { configDir, prompt, done };
}

/** Waits for the CLI to end, but not forever: its poll interval is 5 s, so 30 s is plenty even on a loaded machine. */
async function finished(login: LoginProcess, ms = 30_000) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`wsp login did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([login.done, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A fresh browser context and page; JS errors and console errors (CSP violations among them) are collected. */
async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser!.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // An error page's own status (401 for a bad token) is logged too: that one is by design.
    if (/^Failed to load resource: the server responded with a status of 4\d\d\b/.test(msg.text())) return;
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  return { page, problems };
}

/** Runs a browser step; on failure saves a screenshot (and the HTML) into the temp dir, kept. */
async function withScreenshot(page: Page, name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    keepTmp = true;
    const shot = path.join(tmp, `${name}.png`);
    await page.screenshot({ path: shot, fullPage: true }).catch(() => undefined);
    fs.writeFileSync(path.join(tmp, `${name}.html`), await page.content().catch(() => ''));
    console.log(`# device-browser: screenshot of the failure: ${shot}`);
    throw err;
  } finally {
    await page
      .context()
      .close()
      .catch(() => undefined);
  }
}

describe('the /device page in headless Chromium', () => {
  test('wsp login, /device signed out: the code typed in lower case without the dash, signing in with a password, Approve: the CLI logs in', { skip: noChromium }, async () => {
    const login = startCliLogin('approve');
    const { uri, userCode } = await login.prompt;
    assert.equal(uri, `${publicAddr!.url}/device`);

    const { page, problems } = await openPage();
    await withScreenshot(page, 'approve', async () => {
      const res = await page.goto(uri);
      assert.equal(res?.status(), 200);
      await page.getByRole('heading', { name: 'Sign in a device' }).waitFor();
      // As a person might type it: lower case, no dash.
      await page.getByLabel('Code').fill(userCode.replace('-', '').toLowerCase());
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(`Signed in as ${EMAIL}`).waitFor();
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Device approved' }).waitFor();
      assert.match(await page.getByRole('status').innerText(), new RegExp(`Approved\\. wsp-cli \\(code ${userCode}\\) is signing in as you`));
      assert.equal(new URL(page.url()).pathname, '/device');
      assert.ok(!(await page.content()).includes(PASSWORD), 'the password is not echoed into the page');
      const cookies = await page.context().cookies();
      assert.ok(
        cookies.some((c) => c.name === 'wsp_session' && c.httpOnly && c.sameSite === 'Lax'),
        'the browser holds the session cookie',
      );
      assert.deepEqual(problems, [], 'no script errors or CSP violations on the page');
    });

    const run = await finished(login);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`Logged in to ${server!.url.replace(/\./g, '\\.')} as .*\\(${userId}\\)`));

    // The session the login was given must not be in the server's log either (the file's log scan).
    registerSecret(JSON.parse(fs.readFileSync(path.join(login.configDir, 'credentials.json'), 'utf8')).token);

    const who = await runWsp(['whoami', '--json'], { WSP_CONFIG_DIR: login.configDir });
    assert.equal(who.code, 0, who.stderr);
    const me = JSON.parse(who.stdout);
    assert.equal(me.server, server!.url);
    assert.equal(me.user.id, userId);
    assert.equal(me.credential.kind, 'session');
  });

  test('a wrong password first (the page says so, keeps the code), then signing in and Deny: the CLI exits 1 saying so', { skip: noChromium }, async () => {
    const login = startCliLogin('deny');
    const { uriComplete, userCode } = await login.prompt;

    const { page, problems } = await openPage();
    await withScreenshot(page, 'deny', async () => {
      await page.goto(uriComplete);
      assert.equal(await page.getByLabel('Code').inputValue(), userCode, 'the code is filled in from verification_uri_complete');
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'The email or password is wrong' }).waitFor();
      assert.equal(await page.getByLabel('Code').inputValue(), userCode, 'the code is kept for another try');
      assert.equal(await page.getByLabel('Password').inputValue(), '', 'the password is not');

      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.getByRole('heading', { name: 'Device denied' }).waitFor();
      assert.match(await page.getByRole('status').innerText(), new RegExp(`Denied\\. The login of wsp-cli \\(code ${userCode}\\) will fail`));
      assert.deepEqual(problems, [], 'no script errors or CSP violations on the page');
    });

    const run = await finished(login);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /the login was denied in the browser/);
    assert.ok(!fs.existsSync(path.join(login.configDir, 'credentials.json')), 'nothing saved');
  });

  test("signing in through the OpenID provider instead: /device, single sign-on, the provider's login and consent, back to /device with the code, Approve", { skip: noChromium }, async () => {
    const login = startCliLogin('sso');
    const { uriComplete, userCode } = await login.prompt;

    const { page, problems } = await openPage();
    // The provider's development pages load a web font from the internet, which this machine has not.
    const failed: string[] = [];
    page.on('requestfailed', (r) => failed.push(r.url()));
    await withScreenshot(page, 'sso', async () => {
      await page.goto(uriComplete);
      await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
      // The provider's own pages (oidc-provider's development interactions).
      await page.waitForURL((url) => url.origin === idp!.issuer);
      await page.getByPlaceholder('Enter any login').fill('sso-owner');
      await page.getByPlaceholder('and password').fill('anything');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      // Back on the platform, signed in, the code kept.
      await page.getByText(`Signed in as ${EMAIL}`).waitFor();
      assert.equal(new URL(page.url()).pathname, '/device');
      assert.equal(await page.getByLabel('Code').inputValue(), userCode);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Device approved' }).waitFor();
      const ours = [publicAddr!.url, server!.url, idp!.issuer].map((u) => new URL(u).origin);
      assert.deepEqual(
        failed.filter((u) => ours.includes(new URL(u).origin)),
        [],
        'every request to the platform and the provider was answered',
      );
      const external = failed.length;
      assert.deepEqual(
        problems.filter((p) => !(external > 0 && p.includes('net::ERR_NAME_NOT_RESOLVED'))),
        [],
        'no script errors or CSP violations',
      );
    });

    const run = await finished(login);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`\\(${userId}\\)`));
    registerSecret(JSON.parse(fs.readFileSync(path.join(login.configDir, 'credentials.json'), 'utf8')).token);
  });
});
