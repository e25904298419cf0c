import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, git, masterKey } from '../reliability/servers.js';

/**
 * Issue 51.5: two `wsp serve` processes (each with its job worker) on one database, the same
 * change request merged on both at once, with the same If-Match (docs/spec-gaps.md, "Repository
 * change requests": the install's row lock orders the merges across processes, the etag read again
 * under it refuses the others). Each round, MERGERS merges split between the two: exactly one 200,
 * every other 409 (7030); `main` at the head, once; the
 * render `succeeded`, `current_version` moved; `git fsck --strict` clean and every commit on
 * `main` names a render. On SQLite the two processes share the file (BEGIN IMMEDIATE orders their
 * writes); on PostgreSQL the row lock does.
 */
const ROUNDS = 4;
/** Merges sent at once each round, half to each server. */
const MERGERS = 6;
let tdb: TestDatabase;
const servers: ServerProcess[] = [];
let people: { workspace: string; owner: string; member: string };

before(async () => {
  tdb = await openTestDatabase();
  const admin = createAdminService(tdb.database.db, systemClock);
  const boot = await admin.bootstrap();
  const member = (await admin.createUser({ name: 'reviewer' })).user_id;
  await admin.addMember(boot.workspace_id, member, 'member');
  people = { workspace: boot.workspace_id, owner: boot.session_token, member: (await admin.createSession(member)).session_token };
  registerSecret(boot.session_token, boot.api_token, people.member);
  const env = { ...tdb.env, WSP_MASTER_KEY: masterKey() };
  const started = await Promise.allSettled([startServer(env), startServer(env)]);
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await tdb.cleanup();
});

const call = (i: number, method: string, url: string, body?: unknown, headers: Record<string, string> = {}, who: 'owner' | 'member' = 'owner') =>
  api(servers[i % 2]!.url, method, url, { credential: people[who], workspaceId: people.workspace, ...(body === undefined ? {} : { body }), headers });
async function ok(i: number, method: string, url: string, body?: unknown, headers: Record<string, string> = {}, who: 'owner' | 'member' = 'owner') {
  const res = await call(i, method, url, body, headers, who);
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${url} -> ${res.status} ${res.text}`);
  return res.body;
}
async function renderDone(id: string) {
  return waitFor(`render ${id} to finish`, async () => {
    const r = await ok(0, 'GET', `/v1/renders/${id}`);
    return ['queued', 'running'].includes(r.state) ? null : r;
  });
}

test(`two wsp serve processes on one database merge the same change request at once (${MERGERS} requests): exactly one 200, the others 409, ${ROUNDS} rounds`, { timeout: 300_000 }, async () => {
  const pkg = await ok(0, 'POST', '/v1/packages', { name: 'two-servers' });
  const versions = [];
  for (let v = 1; v <= ROUNDS + 1; v++) versions.push(await ok(0, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: `${v}.0.0`, files: { 'hello.txt': `Hello v${v}\n` } }));
  const made = await ok(0, 'POST', '/v1/installs', { name: 'two-servers', package_id: pkg.id, version_id: versions[0].id, delivery: 'change_request', required_approvals: 1 });
  assert.equal((await renderDone(made.last_render.id)).state, 'succeeded');
  const repo = path.join(tdb.dataDir, 'repos', `${made.id}.git`);
  const winners = [0, 0];

  for (let round = 1; round <= ROUNDS; round++) {
    const install = await ok(round, 'GET', `/v1/installs/${made.id}`);
    const patched = await ok(round, 'PATCH', `/v1/installs/${made.id}`, { desired_version_id: versions[round].id }, { 'if-match': install.etag });
    const render = await renderDone(patched.last_render.id);
    assert.equal(render.state, 'awaiting_merge');
    const opened = await ok(round, 'GET', `/v1/repository_change_requests/${render.repository_change_request_id}`);
    const cr = await ok(round + 1, 'POST', `/v1/repository_change_requests/${opened.id}:approve`, undefined, { 'if-match': opened.etag }, 'member');
    const base = git(repo, 'rev-parse', 'refs/heads/main');
    assert.equal(cr.base_commit_sha, base);

    // MERGERS requests, alternating between the servers, so that some read the change request before any commits.
    const answers = await Promise.all(
      Array.from({ length: MERGERS }, (_, i) => call(i, 'POST', `/v1/repository_change_requests/${cr.id}:merge`, { head_commit_sha: cr.head_commit_sha }, { 'if-match': cr.etag })),
    );
    const statuses = answers.map((a) => a.status);
    assert.deepEqual([...statuses].sort(), [200, ...Array<number>(MERGERS - 1).fill(409)], answers.map((a) => a.text).join('\n'));
    for (const loser of answers.filter((a) => a.status === 409)) assert.equal(loser.body.errors[0].code, 7030, loser.text);
    winners[statuses.indexOf(200) % 2]!++;
    const winner = answers.find((a) => a.status === 200)!.body;

    // Both servers read the same merged change request; main moved once, forward, to the head.
    for (const i of [0, 1]) assert.deepEqual(await ok(i, 'GET', `/v1/repository_change_requests/${cr.id}`), winner);
    assert.equal(winner.state, 'merged');
    assert.equal(git(repo, 'rev-parse', 'refs/heads/main'), cr.head_commit_sha);
    assert.equal(git(repo, 'rev-parse', `${cr.head_commit_sha}^`), base);
    const after = await ok(round, 'GET', `/v1/renders/${render.id}`);
    assert.deepEqual([after.state, after.commit_sha], ['succeeded', cr.head_commit_sha]);
    assert.equal((await ok(round, 'GET', `/v1/installs/${made.id}`)).current_version.id, versions[round].id);
    const events = await ok(0, 'GET', `/v1/audit_events?resource_id=${cr.id}&type=repository_change_request.merged`);
    assert.equal(events.data.length, 1, 'one merged event');
  }
  const renders = await tdb.database.db.selectFrom('renders').select(['id', 'commit_sha', 'state']).where('install_id', '=', made.id).execute();
  assert.equal(checkRepository(repo, renders), ROUNDS + 1, 'the first render and one commit per merge on main');
  process.stderr.write(`# merges won by server 0: ${winners[0]}, by server 1: ${winners[1]}\n`);
});
