import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { migrate, openDatabase, type Database } from '../../src/db/database.js';
import { createAdminService, type AdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

/**
 * A real `wsp serve` on its own SQLite database and Chromium in front of it, for the console's
 * flows (test/console/flows). It does not go through the test harness, so these files run once,
 * on SQLite; test/console/console-browser.test.ts walks its flow on both engines.
 */
export const SHOTS = path.join(process.cwd(), 'test-output/console');
export const PASSWORD = 'the console password';

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Requests that left the console's origin. */
  foreign: string[];
  /** Content-Security-Policy violations and uncaught page errors. */
  violations: string[];
  /** Fails the test if anything above happened; closes the page's context. */
  done(): Promise<void>;
}

export interface ConsoleSite {
  url: string;
  server: ServerProcess;
  database: Database;
  admin: AdminService;
  owner: { email: string; user_id: string; workspace_id: string; session_token: string };
  /** A call to the API as the owner (or another session), answered as JSON; fails the test on an error. */
  api<T = any>(method: string, url: string, body?: unknown, opts?: { session?: string; headers?: Record<string, string> }): Promise<T>;
  /** The raw answer of a call, for the statuses the test expects. */
  fetch(method: string, url: string, body?: unknown, opts?: { session?: string; headers?: Record<string, string> }): Promise<Response>;
  open(opts?: { width?: number; height?: number }): Promise<WatchedPage>;
  /** A page signed in as `email` (the owner by default) and showing the dashboards. */
  signedIn(opts?: { email?: string; password?: string; width?: number }): Promise<WatchedPage>;
  close(): Promise<void>;
}

/** `env` for the server, or a function making it from the site's public URL (known before the server starts). */
export async function startConsoleSite(env: Record<string, string> | ((publicUrl: string) => Promise<Record<string, string>>) = {}, email = 'owner@example.com'): Promise<ConsoleSite> {
  const launching = import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 }));
  launching.catch(() => undefined);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-console-'));
  const database = await openDatabase({ dataDir });
  let server: ServerProcess | undefined;
  let addr: PublicAddress | undefined;
  let browser: Browser | undefined;
  try {
    await migrate(database);
    const admin = createAdminService(database.db, systemClock);
    const boot = await admin.bootstrap({ email, password: PASSWORD });
    addr = await publicAddress();
    const extra = typeof env === 'function' ? await env(addr.url) : env;
    server = await startServer({ WSP_DATA_DIR: dataDir, WSP_PUBLIC_URL: addr.url, ...extra });
    addr.forwardTo(server.url);
    browser = await launching;
    fs.mkdirSync(SHOTS, { recursive: true });
    const origin = new URL(addr.url).origin;
    const url = addr.url;

    const call = (method: string, path: string, body?: unknown, opts: { session?: string; headers?: Record<string, string> } = {}) =>
      globalThis.fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${opts.session ?? boot.session_token}`,
          'service-context': boot.workspace_id,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...opts.headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    const open = (opts: { width?: number; height?: number } = {}) => watchedPage(browser!, origin, opts);

    return {
      url,
      server,
      database,
      admin,
      owner: { email, ...boot },
      async api(method, path, body, opts) {
        const res = await call(method, path, body, opts);
        const text = await res.text();
        assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
        return (text ? JSON.parse(text) : null) as never;
      },
      fetch: call,
      open,
      async signedIn(opts = {}) {
        const w = await open(opts.width ? { width: opts.width } : {});
        await w.page.goto(`${url}/console/sign-in`);
        await w.page.getByLabel('Email').fill(opts.email ?? email);
        await w.page.getByLabel('Password').fill(opts.password ?? PASSWORD);
        await w.page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await w.page.getByRole('heading', { name: /^Dashboards/ }).waitFor();
        return w;
      },
      async close() {
        await browser?.close().catch(() => undefined);
        await server?.stop('SIGTERM', 5_000);
        await addr?.close();
        await database.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await (browser ?? (await launching.catch(() => undefined)))?.close().catch(() => undefined);
    await server?.stop('SIGKILL', 5_000);
    await addr?.close();
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** A page in a fresh context that records every request leaving `origin`, every CSP violation and every page error. */
export async function watchedPage(browser: Browser, origin: string, opts: { width?: number; height?: number } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const foreign: string[] = [];
  const violations: string[] = [];
  // What the console's pages ask for; a page of another site the person was sent to (the OpenID
  // provider) loads what it likes.
  page.on('request', (r) => {
    let from: string;
    try {
      from = new URL(r.frame().url()).origin;
    } catch {
      from = origin;
    }
    if (!r.url().startsWith('data:') && (from === origin || from === 'null') && new URL(r.url()).origin !== origin) foreign.push(r.url());
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  await page.exposeFunction('reportViolation', (v: string) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => (window as unknown as { reportViolation(v: string): void }).reportViolation(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return {
    page,
    context,
    foreign,
    violations,
    async done() {
      await context.close();
      assert.deepEqual(foreign, [], 'requests to another origin');
      assert.deepEqual(violations, [], 'Content-Security-Policy violations and page errors');
    },
  };
}

/** The accessibility tree of the page's main region, as assistive technology reads it (roles and names). */
export async function ariaOf(page: Page, selector = 'main'): Promise<string> {
  return page.locator(selector).first().ariaSnapshot();
}

/** Asserts the accessibility tree holds each line (a role and its name, as `ariaSnapshot` writes them). */
export async function assertAria(page: Page, lines: (string | RegExp)[], selector = 'main'): Promise<void> {
  const tree = await ariaOf(page, selector);
  for (const line of lines) {
    if (typeof line === 'string') assert.ok(tree.includes(line), `the accessibility tree has ${line}:\n${tree}`);
    else assert.match(tree, line, `the accessibility tree matches ${line}`);
  }
}

/** Nothing wider than the window: no sideways scrolling at this width. */
export async function assertFits(page: Page): Promise<void> {
  // After a resize, layout (and what redraws on resize, such as charts) settles within frames.
  await page.waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, undefined, { timeout: 2000 }).catch(() => undefined);
  const { scroll, width, wide } = await page.evaluate(() => {
    const width = window.innerWidth;
    // The elements that reach past the window's right edge, for the message.
    const clipped = (e: Element): boolean => {
      for (let p = e.parentElement; p; p = p.parentElement) if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
      return false;
    };
    const wide = [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > width + 0.5 && !clipped(e))
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().right)} px)`);
    return { scroll: document.documentElement.scrollWidth, width, wide };
  });
  assert.ok(scroll <= width, `the page is ${scroll} px wide in a ${width} px window: ${wide.join(', ')}`);
}

/** Runs a flow; when it fails, a screenshot of where it stood goes beside the others (failed-<name>.png). */
export async function walk(page: Page, name: string, flow: () => Promise<void>): Promise<void> {
  try {
    await flow();
  } catch (err) {
    await shot(page, `failed-${name}`).catch(() => undefined);
    throw err;
  }
}

export async function shot(page: Page, name: string): Promise<string> {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
