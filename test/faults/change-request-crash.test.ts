import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { CHANGE_REQUEST_LAND } from '../../src/installs/job-kinds.js';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { checkRepository, git, masterKey } from '../reliability/servers.js';

/**
 * Issue 51.5: a real `wsp serve` killed (SIGKILL) in the middle of a change request's merge
 * (docs/spec-gaps.md, "Repository change requests", "How the merge is one transaction"). The merge
 * commits its rows first and moves `main` after, so the two places it can die are:
 * - after its transaction committed, before `main` moved: the rows say merged while `main` is at
 *   the base. After a restart, the job the merge queued (src/installs/changes/land-job.ts) lands
 *   it, with no other write to the install: `main` at the head, the rows and the ref agree;
 * - inside its transaction (before the commit): nothing happened; the same merge, with the same
 *   If-Match, then succeeds.
 * The fault is armed from outside (test/helpers/serve-git-fault.ts): the server kills itself at
 * that git step for that one commit. Afterwards no ref names a commit the rows do not know, and
 * the repository passes `git fsck --strict`.
 */
let tdb: TestDatabase;
let env: Record<string, string>;
let work: string;
let faultFile: string;
let people: { workspace: string; owner: string; member: string };
const servers: ServerProcess[] = [];

before(async () => {
  tdb = await openTestDatabase();
  env = { ...tdb.env, WSP_MASTER_KEY: masterKey() };
  const admin = createAdminService(tdb.database.db, systemClock);
  const boot = await admin.bootstrap();
  const member = (await admin.createUser({ name: 'reviewer' })).user_id;
  await admin.addMember(boot.workspace_id, member, 'member');
  people = { workspace: boot.workspace_id, owner: boot.session_token, member: (await admin.createSession(member)).session_token };
  registerSecret(boot.session_token, boot.api_token, people.member);
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-cr-crash-'));
  faultFile = path.join(work, 'fault');
  fs.writeFileSync(faultFile, '');
});
after(async () => {
  for (const s of servers) await s.stop('SIGKILL');
  await tdb.cleanup();
  fs.rmSync(work, { recursive: true, force: true });
});

/** `wsp serve` with the fault wrapper (armed only once the fault file names a step and a commit). */
async function faultyServer(): Promise<ServerProcess> {
  const s = await startServer(env, [], ['--import', 'tsx', path.join(REPO_ROOT, 'test/helpers/serve-git-fault.ts'), faultFile]);
  servers.push(s);
  return s;
}
async function plainServer(): Promise<ServerProcess> {
  const s = await startServer(env);
  servers.push(s);
  return s;
}

const as = (who: 'owner' | 'member') => ({ credential: people[who], workspaceId: people.workspace });
async function ok(base: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}, who: 'owner' | 'member' = 'owner') {
  const res = await api(base, method, url, { ...as(who), ...(body === undefined ? {} : { body }), headers });
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${url} -> ${res.status} ${res.text}`);
  return res.body;
}
const repo = (installId: string) => path.join(tdb.dataDir, 'repos', `${installId}.git`);
const mainOf = (installId: string) => git(repo(installId), 'rev-parse', 'refs/heads/main');

async function renderDone(base: string, id: string) {
  return waitFor(`render ${id} to finish`, async () => {
    const r = await ok(base, 'GET', `/v1/renders/${id}`);
    return ['queued', 'running'].includes(r.state) ? null : r;
  });
}

/** An install of 1.0.0 (landed directly) under review, with change request 1 (to 2.0.0) opened by the owner and approved by the member. */
async function approvedChangeRequest(base: string, name: string) {
  const pkg = await ok(base, 'POST', '/v1/packages', { name });
  const v1 = await ok(base, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello v1\n' } });
  const v2 = await ok(base, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '2.0.0', files: { 'hello.txt': 'Hello v2\n' } });
  const made = await ok(base, 'POST', '/v1/installs', { name, package_id: pkg.id, version_id: v1.id, delivery: 'change_request', required_approvals: 1 });
  assert.equal((await renderDone(base, made.last_render.id)).state, 'succeeded');
  const install = await ok(base, 'GET', `/v1/installs/${made.id}`);
  const patched = await ok(base, 'PATCH', `/v1/installs/${made.id}`, { desired_version_id: v2.id }, { 'if-match': install.etag });
  const render = await renderDone(base, patched.last_render.id);
  assert.equal(render.state, 'awaiting_merge');
  const opened = await ok(base, 'GET', `/v1/repository_change_requests/${render.repository_change_request_id}`);
  const approved = await ok(base, 'POST', `/v1/repository_change_requests/${opened.id}:approve`, undefined, { 'if-match': opened.etag }, 'member');
  assert.equal(approved.mergeable, true);
  return { install, v1, v2, render, cr: approved };
}

/** Sends the merge to a server armed to die during it: no answer comes, the process ends by SIGKILL. */
async function mergeThatKills(server: ServerProcess, cr: { id: string; etag: string }) {
  const answer = await api(server.url, 'POST', `/v1/repository_change_requests/${cr.id}:merge`, { ...as('owner'), body: {}, headers: { 'if-match': cr.etag }, retry: false }).then(
    (res) => `answered ${res.status} ${res.text}`,
    () => 'no answer',
  );
  assert.equal(answer, 'no answer');
  assert.equal(await server.exited, 'SIGKILL');
  fs.writeFileSync(faultFile, '');
}

/** Every ref of the repository names a commit some row knows: a render's commit, or a change request's head or base. */
async function refsKnown(installId: string) {
  const renders = await tdb.database.db.selectFrom('renders').select(['commit_sha']).where('install_id', '=', installId).execute();
  const crs = await tdb.database.db.selectFrom('repository_change_requests').select(['head_commit_sha', 'base_commit_sha']).where('install_id', '=', installId).execute();
  const known = new Set([...renders.map((r) => r.commit_sha), ...crs.flatMap((c) => [c.head_commit_sha, c.base_commit_sha])].filter(Boolean));
  for (const line of git(repo(installId), 'for-each-ref', '--format=%(objectname) %(refname)').split('\n').filter(Boolean)) {
    const [sha, ref] = line.split(' ');
    assert.ok(known.has(sha!), `${ref} names ${sha}, which no row knows`);
  }
}

const rowOf = (id: string) => tdb.database.db.selectFrom('repository_change_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

test('killed after the merge committed and before main moved: after a restart, with no other write, main reaches the head and the rows and refs agree', { timeout: 180_000 }, async () => {
  let server = await faultyServer();
  const x = await approvedChangeRequest(server.url, 'crash-after-commit');
  const base = mainOf(x.install.id);
  assert.equal(base, x.cr.base_commit_sha);
  fs.writeFileSync(faultFile, `advanceMain ${x.cr.head_commit_sha}`);
  await mergeThatKills(server, x.cr);

  // The window the fault opened: the rows say merged, main is still at the base.
  const dead = await rowOf(x.cr.id);
  assert.deepEqual([dead.state, dead.landed], ['merged', 0]);
  assert.equal(mainOf(x.install.id), base, 'the process died before main moved');

  server = await plainServer();
  // Nobody writes to the install: what moves main is the job the merge queued.
  await waitFor('main at the merged head', () => mainOf(x.install.id) === x.cr.head_commit_sha, { timeoutMs: 60_000, intervalMs: 250 });
  const cr = await ok(server.url, 'GET', `/v1/repository_change_requests/${x.cr.id}`);
  assert.equal(cr.state, 'merged');
  assert.equal(typeof cr.merged_at, 'number');
  await waitFor('the change request marked landed', async () => (await rowOf(x.cr.id)).landed === 1);
  const render = await ok(server.url, 'GET', `/v1/renders/${x.render.id}`);
  assert.equal(render.state, 'succeeded');
  assert.equal(render.commit_sha, x.cr.head_commit_sha);
  const install = await ok(server.url, 'GET', `/v1/installs/${x.install.id}`);
  assert.equal(install.current_version.id, x.v2.id);
  assert.equal(install.open_change_request_id, null);
  assert.equal((await ok(server.url, 'GET', `/v1/installs/${x.install.id}/repository`)).head_commit_sha, x.cr.head_commit_sha);
  assert.equal(git(repo(x.install.id), 'rev-parse', `${x.cr.head_commit_sha}^`), base, 'a fast-forward from the base');
  assert.equal(git(repo(x.install.id), 'rev-parse', 'refs/changes/1'), x.cr.head_commit_sha);
  assert.equal(git(repo(x.install.id), 'show', 'main:hello.txt'), 'Hello v2');
  // What landed it: the job the merge queued (its outcome is recorded just after its transaction).
  await waitFor('the landing job succeeded', async () => {
    const jobs = await tdb.database.db.selectFrom('jobs').select(['state']).where('kind', '=', CHANGE_REQUEST_LAND).execute();
    return jobs.length === 1 && jobs[0]!.state === 'succeeded';
  });
  const renders = await tdb.database.db.selectFrom('renders').select(['id', 'commit_sha', 'state']).where('install_id', '=', x.install.id).execute();
  assert.equal(checkRepository(repo(x.install.id), renders), 2, 'two commits on main: the first render and the merged head');
  await refsKnown(x.install.id);
  await server.stop();
});

test('killed inside the merge’s transaction: nothing moved; the same merge, with the same If-Match, then succeeds', { timeout: 180_000 }, async () => {
  let server = await faultyServer();
  const x = await approvedChangeRequest(server.url, 'crash-before-commit');
  const base = mainOf(x.install.id);
  fs.writeFileSync(faultFile, `commitMessage ${x.cr.head_commit_sha}`);
  await mergeThatKills(server, x.cr);

  server = await plainServer();
  const cr = await ok(server.url, 'GET', `/v1/repository_change_requests/${x.cr.id}`);
  assert.equal(cr.state, 'open');
  assert.equal(cr.etag, x.cr.etag, 'the change request did not move');
  assert.equal((await rowOf(x.cr.id)).merged_at, null);
  assert.equal((await ok(server.url, 'GET', `/v1/renders/${x.render.id}`)).state, 'awaiting_merge');
  assert.equal((await ok(server.url, 'GET', `/v1/installs/${x.install.id}`)).current_version.id, x.v1.id);
  assert.equal(mainOf(x.install.id), base);
  await refsKnown(x.install.id);

  const merged = await ok(server.url, 'POST', `/v1/repository_change_requests/${x.cr.id}:merge`, {}, { 'if-match': x.cr.etag });
  assert.equal(merged.state, 'merged');
  assert.equal(mainOf(x.install.id), x.cr.head_commit_sha);
  assert.equal((await ok(server.url, 'GET', `/v1/installs/${x.install.id}`)).current_version.id, x.v2.id);
  const renders = await tdb.database.db.selectFrom('renders').select(['id', 'commit_sha', 'state']).where('install_id', '=', x.install.id).execute();
  assert.equal(checkRepository(repo(x.install.id), renders), 2);
  await refsKnown(x.install.id);
  await server.stop();
});
