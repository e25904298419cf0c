import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../helpers/chromium.js';

/**
 * Issue 48, items 3 and 4: login CSRF, tried as an attacker would, in a real Chromium against a
 * real server process. The attacker's page is served from another site (`attacker.test`, which
 * Chromium resolves to 127.0.0.1 by a host rule: nothing leaves loopback). Its lures: the
 * callback URL of a single sign-on the attacker started and completed at the provider as
 * themselves, and a form that posts the attacker's email and password to the `/device` page.
 * Either, followed by the victim's browser, used to sign that browser in as the attacker.
 */
const noChromium = chromiumMissing('login-csrf-browser');

const VICTIM = { email: 'victim@corp.test', password: 'the victim password 1' };
const ATTACKER = { email: 'attacker@evil.test', password: 'the attacker password 1' };

let tdb: TestDatabase;
let server: ServerProcess | undefined;
let pub: PublicAddress | undefined;
let idp: TestProvider | undefined;
let browser: Browser | undefined;
let launching: Promise<Browser> | undefined;
let lures: http.Server | undefined;
let lureBase = '';
let victimId = '';
let attackerId = '';

/** What the attacker's site serves: a page that sends the browser on, or posts a form, by itself. */
function lureSite(): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://attacker.test');
    const to = url.searchParams.get('to') ?? '';
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (url.pathname === '/follow') {
      res.end(`<!doctype html><title>You won</title><meta http-equiv="refresh" content="0;url=${esc(to)}">`);
    } else if (url.pathname === '/post') {
      const fields = { action: 'sign_in', email: ATTACKER.email, password: ATTACKER.password, user_code: '' };
      const inputs = Object.entries(fields)
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${esc(v)}">`)
        .join('');
      res.end(`<!doctype html><title>You won</title><form method="post" action="${esc(to)}">${inputs}</form><script>document.forms[0].submit()</script>`);
    } else {
      res.statusCode = 404;
      res.end('not here');
    }
  });
}

before(async () => {
  if (noChromium) return;
  launching = import('playwright-core').then(({ chromium }) =>
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP attacker.test 127.0.0.1'], timeout: 30_000 }),
  );
  launching.catch(() => undefined);
  tdb = await openTestDatabase();
  const admin = createAdminService(tdb.database.db, systemClock);
  victimId = (await admin.bootstrap({ email: VICTIM.email, password: VICTIM.password })).user_id;
  attackerId = (await admin.createUser({ name: 'Attacker', email: ATTACKER.email })).user_id;
  await admin.setPassword(attackerId, ATTACKER.password);
  pub = await publicAddress();
  idp = await startProvider(`${pub.url}/v1/auth/oidc/callback`);
  idp.accounts['attacker-sso'] = { email: ATTACKER.email, email_verified: true, name: 'Attacker' };
  idp.accounts['victim-sso'] = { email: VICTIM.email, email_verified: true, name: 'Victim' };
  server = await startServer({ ...tdb.env, WSP_PUBLIC_URL: pub.url, WSP_OIDC_ISSUER: idp.issuer, WSP_OIDC_CLIENT_ID: idp.clientId, WSP_OIDC_CLIENT_SECRET: idp.clientSecret });
  pub.forwardTo(server.url);
  lures = lureSite();
  await new Promise<void>((resolve) => lures!.listen(0, '127.0.0.1', resolve));
  lureBase = `http://attacker.test:${(lures.address() as AddressInfo).port}`;
  browser = await launching;
});

after(async () => {
  const launched = browser ?? (await launching?.catch(() => undefined));
  await launched?.close().catch(() => undefined);
  if (server) await server.stop('SIGTERM', 5_000);
  await pub?.close();
  await idp?.close();
  if (lures) await new Promise<void>((resolve) => lures!.close(() => resolve()));
  if (tdb) await tdb.cleanup();
});

/** The platform's session cookie the browser holds, if any. */
async function sessionCookie(context: BrowserContext): Promise<string | undefined> {
  return (await context.cookies(pub!.url)).find((c) => c.name === 'wsp_session')?.value;
}

/** Who the browser is signed in as, asking the API with the browser's own cookies. */
async function whoAmI(context: BrowserContext): Promise<string | null> {
  const res = await context.request.get(`${pub!.url}/v1/me`);
  return res.status() === 200 ? ((await res.json()) as { user: { id: string } }).user.id : null;
}

describe('login CSRF in a real browser', () => {
  test("single sign-on: the callback of a login the attacker started signs the victim's browser in as nobody; the victim's own sign-on works", { skip: noChromium }, async () => {
    // The attacker, in their own client: start, sign in at the provider as themselves, stop before the callback.
    const start = await fetch(`${pub!.url}/v1/auth/oidc/start?return_to=/console/`, { redirect: 'manual' });
    assert.equal(start.status, 302);
    const callback = await idp!.signIn(String(start.headers.get('location')), 'attacker-sso');
    assert.equal(callback.pathname, '/v1/auth/oidc/callback');

    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const landed = page.waitForResponse((r) => r.url().startsWith(`${pub!.url}/v1/auth/oidc/callback`));
      await page.goto(`${lureBase}/follow?to=${encodeURIComponent(callback.href)}`);
      const res = await landed;
      assert.equal(res.status(), 400);
      assert.match(await res.text(), /started in another browser/);
      assert.equal(await sessionCookie(context), undefined, "the victim's browser holds no session");
      assert.equal(await whoAmI(context), null);

      // The victim signing in by single sign-on themselves, in the same browser.
      await page.goto(`${pub!.url}/v1/auth/oidc/start?return_to=/console/`);
      await page.waitForURL((url) => url.origin === idp!.issuer);
      await page.getByPlaceholder('Enter any login').fill('victim-sso');
      await page.getByPlaceholder('and password').fill('anything');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(`${pub!.url}/console/`);
      assert.equal(await whoAmI(context), victimId);
    } finally {
      await context.close();
    }
  });

  test("the /device page: a form another site posts with the attacker's password neither signs in a browser nor replaces its session", { skip: noChromium }, async () => {
    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      // Signed out: the lure would sign the browser in as the attacker.
      const refused = page.waitForResponse((r) => r.url() === `${pub!.url}/device` && r.request().method() === 'POST');
      await page.goto(`${lureBase}/post?to=${encodeURIComponent(`${pub!.url}/device`)}`);
      assert.equal((await refused).status(), 403);
      await page.getByText('This form was sent from another site').waitFor();
      assert.equal(await sessionCookie(context), undefined);

      // The victim signs in on the page itself (the form of this site works), then meets the lure.
      await page.goto(`${pub!.url}/device`);
      await page.getByLabel('Code').fill('BCDF-GHJK');
      await page.getByLabel('Email').fill(VICTIM.email);
      await page.getByLabel('Password').fill(VICTIM.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(`Signed in as ${VICTIM.email}`).waitFor();
      const mine = await sessionCookie(context);
      assert.ok(mine);
      const again = page.waitForResponse((r) => r.url() === `${pub!.url}/device` && r.request().method() === 'POST');
      await page.goto(`${lureBase}/post?to=${encodeURIComponent(`${pub!.url}/device`)}`);
      assert.equal((await again).status(), 403);
      assert.equal(await sessionCookie(context), mine, "the victim's session is the one they made");
      assert.equal(await whoAmI(context), victimId);
      assert.notEqual(await whoAmI(context), attackerId);
    } finally {
      await context.close();
    }
  });
});
