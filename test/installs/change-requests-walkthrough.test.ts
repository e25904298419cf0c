import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing } from '../helpers/chromium.js';
import { watchedPage } from '../console/console-site.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJsonOf, api, runWsp, startServer, type ApiOptions, type ServerProcess } from '../helpers/processes.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { registerSecret } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { startReceiver } from '../webhooks/receiver.js';

/**
 * Issue 51's "done when", with real processes: `wsp admin bootstrap`, `wsp serve` behind its
 * public address, the real `git` client and a real webhook receiver that checks every request
 * with the `standardwebhooks` package. An install switched to `delivery: change_request` with
 * `required_approvals: 1`; a new version opens change request 1 on `refs/changes/1` while
 * `main`, `current_version` and a clone keep the old tree; its author cannot approve it; a
 * second member, signed in to the console in Chromium, approves it there; the merge moves
 * `main`, the render and `current_version` together; a fresh clone has the new tree; the three
 * events are in the audit log and reached the receiver signed; `git fsck` is clean on both sides.
 */
let tdb: TestDatabase;
const noChromium = chromiumMissing('change request walkthrough');
let browser: Browser | undefined;
let launching: Promise<Browser> | undefined;
let server: ServerProcess;
let pub: PublicAddress;
let work: string;
let secret: string | undefined;
let rx: Awaited<ReturnType<typeof startReceiver>>;

const OWNER = { email: 'owner@example.com', password: 'the owner’s long password' };
const SECOND = { email: 'reviewer@example.com', password: 'the reviewer’s long password' };

before(async () => {
  if (!noChromium) {
    launching = import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 }));
    launching.catch(() => undefined);
  }
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-cr-walk-'));
  tdb = await openTestDatabase();
  pub = await publicAddress();
  rx = await startReceiver(() => secret);
  server = await startServer({ ...tdb.env, WSP_PUBLIC_URL: pub.url, WSP_WEBHOOKS_ALLOW_HTTP: 'true', WSP_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  pub.forwardTo(server.url);
  browser = await launching;
});
after(async () => {
  const launched = browser ?? (await launching?.catch(() => undefined));
  await launched?.close().catch(() => undefined);
  await server?.stop('SIGTERM');
  await pub?.close();
  await rx?.close();
  await tdb?.cleanup();
  fs.rmSync(work, { recursive: true, force: true });
});

/**
 * Through the public address, as a browser, the CLI or git reach it. Every write carries an
 * Idempotency-Key, so a 503 (a starved database) is retried as the SDK retries it.
 */
const call = (method: string, url: string, opts: ApiOptions = {}) => api(pub.url, method, url, method === 'GET' ? opts : { ...opts, headers: { 'idempotency-key': randomUUID(), ...opts.headers } });

interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** git with no user or system configuration, no credential helper and no prompt. */
function git(args: string[], cwd = work): Promise<GitRun> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-c', 'credential.helper=', ...args],
      { cwd, env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' }, timeout: 60_000, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr: stderr.trim() }),
    );
  });
}
async function gitOk(args: string[], cwd = work): Promise<string> {
  const res = await git(args, cwd);
  assert.equal(res.code, 0, `git ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}
/** The server's own bare repository, read with git directly (what no API answer could hide). */
const serverGit = (installId: string, ...args: string[]) =>
  execFileSync('git', args, { env: { PATH: process.env.PATH, GIT_DIR: path.join(tdb.dataDir, 'repos', `${installId}.git`), GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' }).trim();
let clones = 0;

test(
  'change_request delivery: opened on refs/changes/1 with main untouched, the author refused, a second member approves in the console, merged, signed webhooks, fsck clean',
  { skip: noChromium },
  async () => {
    // The owner: bootstrapped with a password, then signed in as a person (the author of the change).
    const args = ['bootstrap', '--email', OWNER.email, '--password-stdin'];
    registerSecret(OWNER.password, SECOND.password);
    const boot = adminJsonOf(args, await runWsp(['admin', ...args, '--json'], tdb.env, 60_000, `${OWNER.password}\n`));
    const ws = boot.workspace_id!;
    const apiToken = boot.api_token!;
    const signIn = await call('POST', '/v1/sessions', { body: OWNER });
    assert.equal(signIn.status, 201, signIn.text);
    const owner = { credential: signIn.body.token as string, workspaceId: ws };
    const ownerId = signIn.body.user_id as string;
    const ok = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await call(method, url, { ...owner, headers, ...(body === undefined ? {} : { body }) });
      assert.ok(res.status >= 200 && res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
      return res.body;
    };

    // A second member, who accepts an invitation with a password: they will sign in to the console.
    const invited = await ok('POST', `/v1/workspaces/${ws}/invitations`, { email: SECOND.email, role: 'member' });
    const invitation = (invited.url as string).split('#')[1]!;
    registerSecret(invitation);
    const accepted = await call('POST', '/v1/invitations:accept', { body: { token: invitation, name: 'Reviewer', password: SECOND.password } });
    assert.equal(accepted.status, 200, accepted.text);
    const reviewerId = accepted.body.user_id as string;

    // A receiver for the change requests' events, verifying each request with standardwebhooks.
    const hook = await ok('POST', '/v1/webhooks', { url: rx.url, event_types: ['repository_change_request.*'] });
    secret = hook.secret as string;

    // A package at 1.0.0 and 2.0.0; the install lands 1.0.0 directly (its first render always does).
    const pkg = await ok('POST', '/v1/packages', { name: 'web' });
    const v1 = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}} v1\n' } });
    const v2 = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '2.0.0', files: { 'hello.txt': 'Hello {{who}} v2\n', 'conf/app.yaml': 'name: {{who}}\n' } });
    const created = await ok('POST', '/v1/installs', { name: 'shop', package_id: pkg.id, version_id: v1.id, values: { who: 'world' } });
    const settled = (renderId: string) =>
      waitFor(`render ${renderId} to finish`, async () => {
        const r = await ok('GET', `/v1/renders/${renderId}`);
        return ['queued', 'running'].includes(r.state) ? null : r;
      });
    const first = await settled(created.last_render.id);
    assert.equal(first.state, 'succeeded', JSON.stringify(first));
    const repo = await ok('GET', `/v1/installs/${created.id}/repository`);
    const oldMain = repo.head_commit_sha as string;
    assert.equal(oldMain, first.commit_sha);
    assert.equal(repo.clone_url, `${pub.url}/v1/installs/${created.id}/repository.git`);
    const auth = ['-c', `http.extraHeader=Authorization: Bearer ${apiToken}`];

    // Switched to review: nothing renders yet.
    const before = await ok('GET', `/v1/installs/${created.id}`);
    const switched = await ok('PATCH', `/v1/installs/${created.id}`, { delivery: 'change_request', required_approvals: 1 }, { 'if-match': before.etag });
    assert.deepEqual([switched.delivery, switched.required_approvals], ['change_request', 1]);
    assert.equal(switched.last_render.id, first.id, 'changing the delivery alone starts no render');

    // The owner moves it to 2.0.0: a render that waits on change request 1.
    const patched = await ok('PATCH', `/v1/installs/${created.id}`, { desired_version_id: v2.id }, { 'if-match': switched.etag });
    const waiting = await settled(patched.last_render.id);
    assert.equal(waiting.state, 'awaiting_merge', JSON.stringify(waiting));
    const op = await ok('GET', `/v1/operations/${waiting.operation_id}`);
    assert.deepEqual([op.done, op.result], [true, { render_id: waiting.id, repository_change_request_id: waiting.repository_change_request_id }]);
    const crId = waiting.repository_change_request_id as string;
    const opened = await ok('GET', `/v1/repository_change_requests/${crId}`);
    assert.deepEqual(
      [opened.number, opened.ref, opened.state, opened.author_id, opened.base_commit_sha, opened.mergeable, opened.merge_blockers],
      [1, 'refs/changes/1', 'open', ownerId, oldMain, false, ['approvals_required']],
    );
    assert.deepEqual(opened.diff_stats, { added: 1, modified: 1, removed: 0 });

    // Nothing reached the install yet: main, current_version, and what a clone gets.
    const held = await ok('GET', `/v1/installs/${created.id}`);
    assert.equal(held.current_version.id, v1.id, 'current_version stays');
    assert.equal(held.open_change_request_id, crId);
    assert.equal((await ok('GET', `/v1/installs/${created.id}/repository`)).head_commit_sha, oldMain, 'main stays');
    const early = path.join(work, `clone-${++clones}`);
    await gitOk([...auth, 'clone', '--quiet', repo.clone_url, early]);
    assert.equal(await gitOk(['rev-parse', 'main'], early), oldMain);
    assert.equal(fs.readFileSync(path.join(early, 'hello.txt'), 'utf8'), 'Hello world v1\n', 'a clone shows the old tree');
    assert.equal(fs.existsSync(path.join(early, 'conf')), false);

    // The change under review, with git alone: fetch its ref, diff it against main.
    await gitOk([...auth, 'fetch', '--quiet', 'origin', 'refs/changes/1'], early);
    assert.equal(await gitOk(['rev-parse', 'FETCH_HEAD'], early), opened.head_commit_sha);
    assert.equal(await gitOk(['rev-parse', 'FETCH_HEAD^'], early), oldMain, 'built on main');
    const diff = await gitOk(['diff', 'main', 'FETCH_HEAD'], early);
    assert.match(diff, /^-Hello world v1$/m);
    assert.match(diff, /^\+Hello world v2$/m);
    assert.match(diff, /^\+\+\+ b\/conf\/app\.yaml$/m);

    // Approvals: a person's, never its author's, never a token's; and the merge waits for one.
    const approve = (opts: ApiOptions, etag: string) => call('POST', `/v1/repository_change_requests/${crId}:approve`, { ...opts, headers: { ...opts.headers, 'if-match': etag } });
    const byAuthor = await approve(owner, opened.etag);
    assert.equal(byAuthor.status, 403, byAuthor.text);
    assert.equal(byAuthor.body.errors[0].code, 7333);
    const byToken = await approve({ credential: apiToken }, opened.etag);
    assert.equal(byToken.status, 403, byToken.text);
    const tooEarly = await call('POST', `/v1/repository_change_requests/${crId}:merge`, { ...owner, headers: { 'if-match': opened.etag } });
    assert.equal(tooEarly.status, 409, tooEarly.text);
    assert.equal(tooEarly.body.errors[0].metadata.merge_blockers, 'approvals_required');
    assert.equal((await ok('GET', `/v1/installs/${created.id}/repository`)).head_commit_sha, oldMain, 'a refused merge moves nothing');

    // The second member signs in to the console in Chromium and approves on the change request's page.
    const w = await watchedPage(browser!, new URL(pub.url).origin);
    try {
      await w.page.goto(`${pub.url}/console/sign-in`);
      await w.page.getByLabel('Email').fill(SECOND.email);
      await w.page.getByLabel('Password').fill(SECOND.password);
      await w.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await w.page.getByRole('heading', { name: /^Dashboards/ }).waitFor();
      await w.page.goto(`${pub.url}/console/installs/${created.id}/changes/${crId}`);
      await w.page.getByRole('heading', { name: new RegExp(`^#1 `), level: 1 }).waitFor();
      await w.page.getByRole('main').getByRole('button', { name: 'Approve', exact: true }).click();
      await w.page.getByRole('status').filter({ hasText: 'You approved it.' }).waitFor();
      await w.done();
    } catch (err) {
      await w.page.screenshot({ path: path.join(work, 'approve.png') }).catch(() => undefined);
      throw err;
    }
    const approved = await call('GET', `/v1/repository_change_requests/${crId}`, owner);
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(
      approved.body.approvals.map((a: { user_id: string }) => a.user_id),
      [reviewerId],
    );
    assert.deepEqual([approved.body.mergeable, approved.body.merge_blockers], [true, []]);

    // The merge: main, the render and current_version move together.
    const merged = await ok('POST', `/v1/repository_change_requests/${crId}:merge`, { head_commit_sha: opened.head_commit_sha }, { 'if-match': approved.body.etag });
    assert.deepEqual([merged.state, merged.merged_by], ['merged', ownerId]);
    assert.equal((await ok('GET', `/v1/installs/${created.id}/repository`)).head_commit_sha, opened.head_commit_sha);
    const render = await ok('GET', `/v1/renders/${waiting.id}`);
    assert.deepEqual([render.state, render.commit_sha], ['succeeded', opened.head_commit_sha]);
    const after = await ok('GET', `/v1/installs/${created.id}`);
    assert.equal(after.current_version.id, v2.id);
    assert.equal(after.open_change_request_id, null);

    // A fresh clone has the new tree; main moved forward only.
    const fresh = path.join(work, `clone-${++clones}`);
    await gitOk([...auth, 'clone', '--quiet', repo.clone_url, fresh]);
    assert.equal(await gitOk(['rev-parse', 'main'], fresh), opened.head_commit_sha);
    assert.equal(fs.readFileSync(path.join(fresh, 'hello.txt'), 'utf8'), 'Hello world v2\n');
    assert.equal(fs.readFileSync(path.join(fresh, 'conf/app.yaml'), 'utf8'), 'name: world\n');
    assert.deepEqual((await gitOk(['log', '--format=%H', 'main'], fresh)).split('\n'), [opened.head_commit_sha, oldMain], 'a fast-forward: nothing rewritten');
    await gitOk([...auth, 'fetch', '--quiet', 'origin'], early);
    assert.equal(await gitOk(['rev-parse', 'origin/main'], early), opened.head_commit_sha, 'the old clone fetches the merge');
    for (const dir of [early, fresh]) assert.equal(await gitOk(['fsck', '--strict', '--no-dangling', '--no-progress'], dir), '');
    assert.equal(serverGit(created.id, 'fsck', '--strict', '--no-dangling', '--no-progress'), '');
    assert.equal(serverGit(created.id, 'rev-parse', 'refs/changes/1'), opened.head_commit_sha, 'the ref is kept after the merge');

    // The audit log, newest first, with who did each.
    const audit = (await ok('GET', `/v1/audit_events?resource_id=${crId}&limit=50`)).data as { id: string; type: string; actor: { kind: string; id: string } }[];
    assert.deepEqual(
      audit.map((e) => [e.type, e.actor.kind, e.actor.id]),
      [
        ['repository_change_request.merged', 'user', ownerId],
        ['repository_change_request.approved', 'user', reviewerId],
        ['repository_change_request.opened', 'user', ownerId],
      ],
    );

    // Each event reached the receiver, signed: the audit log's own JSON under its event id.
    await waitFor('the three events at the receiver', () => new Set(rx.received.map((r) => r.id)).size >= 3, {
      detail: () => JSON.stringify(rx.received.map((r) => [r.id, r.verified])),
    });
    const byId = new Map(rx.received.map((r) => [r.id, r]));
    assert.deepEqual([...byId.keys()].sort(), audit.map((e) => e.id).sort(), 'exactly the three events, no other');
    for (const event of audit) {
      const got = byId.get(event.id)!;
      assert.equal(got.verified, true, `${event.type}: the signature verified with standardwebhooks`);
      assert.deepEqual(JSON.parse(got.body), event, `${event.type}: the body is the audit log's event`);
    }
    assert.ok(
      rx.received.every((r) => r.verified),
      'every request verified',
    );
  },
);
