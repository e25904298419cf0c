import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { useTestApp } from '../helpers/test-app.js';
import { clientCommands } from '../../src/cli/client/index.js';
import { writeCredentials } from '../../src/cli/client/credentials.js';
import { logInTo, removeTempConfigDirs, runCli, tempConfigDir, type CliOptions, type CliRun } from './cli-harness.js';

/**
 * Every `wsp` client command against a listening server, as a person with a shell uses them:
 * `--help` for each, then each run with `--json` (the shape of its document, ISO times, lists as
 * `{data, has_more, next_cursor}`), and the exit codes (0; 1 for the API's refusals; 2 usage;
 * 3 not logged in; 4 unreachable). Commands the scenario has not run fail the last test, so a
 * new command comes with its use here. Login, logout and git's credential helper have files of
 * their own (client-login, git-credential); they are listed in ELSEWHERE.
 */
let configDir: string;
let server: string;
let scratch: string;
const ran = new Set<string>();
const ELSEWHERE = new Set(['login', 'logout', 'auth setup-git', 'auth git-credential']);
const NAMES = clientCommands().map((c) => c.name);

const h = useTestApp({
  setup: async () => {
    configDir = await logInTo(h, s, 'owner');
    server = JSON.parse(fs.readFileSync(path.join(configDir, 'credentials.json'), 'utf8')).server;
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-every-'));
  },
  teardown: async () => {
    fs.rmSync(scratch, { recursive: true, force: true });
    removeTempConfigDirs();
  },
});
const s = h.seeded;

const runJobs = () => h.app.jobs.runDue().then(() => undefined);

/** The command a command line names (its longest matching name), for the coverage check. */
const commandOf = (argv: string[]) => NAMES.filter((n) => n.split(' ').every((w, i) => argv[i] === w)).sort((a, b) => b.length - a.length)[0];

async function wsp(argv: string[], opts: Partial<CliOptions> = {}): Promise<CliRun> {
  const name = commandOf(argv);
  if (name) ran.add(name);
  return runCli(argv, { configDir, onSleep: runJobs, ...opts });
}

/** Runs with --json, expects exit 0 and one JSON document on stdout. */
async function json(argv: string[], opts: Partial<CliOptions> = {}): Promise<any> {
  const run = await wsp([...argv, '--json'], opts);
  assert.equal(run.code, 0, `wsp ${argv.join(' ')}: ${run.stderr}`);
  assert.equal(run.stdout.trim().split('\n').length, 1, `wsp ${argv.join(' ')} prints one line of JSON`);
  return JSON.parse(run.stdout);
}

/** A list document: its items, after checking its shape (and the fields a list has beside them: the webhooks' `url_policy`). */
async function list(argv: string[], beside: string[] = []): Promise<any[]> {
  const doc = await json(argv);
  assert.deepEqual(Object.keys(doc).sort(), ['data', 'has_more', 'next_cursor', ...beside].sort(), `wsp ${argv.join(' ')}`);
  assert.ok(Array.isArray(doc.data));
  return doc.data;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** Refused by the API: exit 1, and under --json one error document naming the status. */
async function refused(argv: string[], status: number, opts: Partial<CliOptions> = {}) {
  const run = await wsp([...argv, '--json'], opts);
  assert.equal(run.code, 1, `wsp ${argv.join(' ')}: ${run.stderr}`);
  const doc = JSON.parse(run.stderr);
  assert.equal(doc.error.kind, 'api');
  assert.equal(doc.error.status, status, run.stderr);
  assert.equal(doc.error.exit_code, 1);
  return doc.error;
}

test('--help for every command: exit 0, its usage first, the exit codes last', async () => {
  for (const name of NAMES) {
    const run = await runCli([...name.split(' '), '--help'], { configDir });
    assert.equal(run.code, 0, `${name} --help: ${run.stderr}`);
    assert.match(run.stdout, new RegExp(`^Usage: wsp ${name.replace(/[|]/g, '\\|')}\\b`), name);
    assert.match(run.stdout, /Exit codes: 0 ok/, name);
  }
  const top = await runCli(['--help'], { configDir });
  for (const group of new Set(NAMES.map((n) => n.split(' ')[0]!))) assert.match(top.stdout, new RegExp(`^  ${group}\\b`, 'm'), group);
});

test('workspace, members, invitations, tokens, sessions, notifications', async () => {
  const me = await json(['whoami']);
  assert.equal(me.user.id, s.owner.userId);
  const workspaces = await list(['workspace', 'list']);
  assert.ok(workspaces.some((w) => w.id === s.workspaceId));
  assert.equal(typeof (await json(['workspace', 'quotas'])).api_tokens.limit, 'number');
  assert.equal((await json(['workspace', 'rename', 'Renamed by the CLI'])).name, 'Renamed by the CLI');
  const made = await json(['workspace', 'create', '--name', 'Second']);
  assert.equal((await json(['workspace', 'use', made.id])).workspace, made.id);
  assert.equal((await json(['workspace', 'use', s.workspaceId])).workspace, s.workspaceId);

  const members = await list(['members', 'list']);
  assert.ok(
    members.every((m) => ISO.test(m.joined_at)),
    'times are ISO 8601 under --json',
  );
  assert.equal((await json(['members', 'role', s.member.userId, 'admin'])).role, 'admin');
  assert.equal((await json(['members', 'role', s.member.userId, 'member'])).role, 'member');

  const invitation = await json(['invitations', 'create', '--email', 'new@example.com']);
  assert.match(invitation.url, /#/);
  assert.ok((await list(['invitations', 'list'])).some((i) => i.id === invitation.id));
  const memberDir = tempConfigDir();
  writeCredentials({ server, token: s.member.session, user_id: s.member.userId, workspace: s.workspaceId }, { WSP_CONFIG_DIR: memberDir });
  const accepted = await json(['invitations', 'accept', invitation.url], { configDir: memberDir });
  assert.equal(accepted.workspace_id, s.workspaceId);
  const second = await json(['invitations', 'create', '--email', 'other@example.com', '--role', 'admin']);
  assert.deepEqual(await json(['invitations', 'revoke', second.id, '--yes']), { id: second.id, revoked: true });
  const removable = await h.admin.createUser({ email: 'leaving@example.com' });
  await h.admin.addMember(s.workspaceId, removable.user_id, 'member');
  assert.deepEqual(await json(['members', 'remove', removable.user_id, '--yes']), { user_id: removable.user_id, removed: true });

  const token = await json(['tokens', 'create', '--name', 'every', '--expires-in', '7d', '--scopes', 'secrets:read']);
  assert.match(token.token, /^sk_svc_/);
  assert.ok(ISO.test(token.expires_at));
  assert.ok((await list(['tokens', 'list', '--all'])).some((t) => t.id === token.id));
  // On a terminal 70 characters wide: the table fits it, long cells cut, times relative.
  const narrow = await wsp(['tokens', 'list'], { terminal: true, columns: 70 });
  assert.equal(narrow.code, 0, narrow.stderr);
  for (const line of narrow.stdout.trimEnd().split('\n')) assert.ok(line.length <= 70, `"${line}" is ${line.length} wide`);
  assert.match(narrow.stdout, /…/);
  assert.match(narrow.stdout, / ago|in \d+ |just now/);
  const piped = await wsp(['tokens', 'list']);
  assert.match(piped.stdout, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/, 'ISO 8601 in a pipe');
  assert.deepEqual(await json(['tokens', 'revoke', token.id, '--yes']), { id: token.id, revoked: true });

  const other = await h.admin.createSession(s.owner.userId);
  const sessions = await list(['sessions', 'list']);
  const extra = sessions.find((x) => !x.current && x.id !== undefined && x.issued_by !== undefined && x.id !== sessions.find((y) => y.current)?.id);
  assert.ok(extra && other.session_token);
  assert.deepEqual(await json(['sessions', 'revoke', extra.id, '--yes']), { id: extra.id, revoked: true });

  await list(['notifications', 'list', '--unread']);
  const missing = await refused(['notifications', 'read', 'ntf_01jd0000000000000000000000'], 404);
  assert.equal(missing.errors[0].code, 7002);
  const plain = await wsp(['notifications', 'read', 'ntf_01jd0000000000000000000000']);
  assert.equal(plain.stdout, '', 'nothing claims it was marked read');
  assert.match(plain.stderr, /^error: 404: /);
});

test('secrets, dashboards, snippets, metrics', async () => {
  const secret = await json(['secrets', 'create', '--name', 'every-secret']);
  assert.ok((await list(['secrets', 'list', '--name', 'every-secret'])).some((x) => x.id === secret.id));
  assert.equal((await json(['secrets', 'get', secret.id])).name, 'every-secret');
  const version = await json(['secrets', 'add-version', secret.id, '--comment', 'first'], { stdin: 'hunter2' });
  assert.equal((await list(['secrets', 'versions', secret.id])).length, 1);
  assert.equal(Buffer.from((await json(['secrets', 'access', secret.id])).data, 'base64').toString(), 'hunter2');
  assert.equal((await json(['secrets', 'disable', secret.id, version.id])).state, 'disabled');
  assert.equal((await json(['secrets', 'enable', secret.id, version.id])).state, 'enabled');
  assert.equal((await json(['secrets', 'destroy', secret.id, version.id, '--yes'])).state, 'destroyed');
  assert.deepEqual(await json(['secrets', 'delete', secret.id, '--yes']), { id: secret.id, deleted: true });
  await refused(['secrets', 'get', secret.id], 404);

  const dash = await json(['dashboards', 'create', '--name', 'Every']);
  assert.ok((await list(['dashboards', 'list'])).some((d) => d.id === dash.id));
  assert.equal((await json(['dashboards', 'get', dash.id])).name, 'Every');
  assert.equal((await json(['dashboards', 'update', dash.id, '--name', 'Every, renamed', '--summary', 'rename'])).name, 'Every, renamed');
  const revisions = await list(['dashboards', 'revisions', dash.id]);
  assert.equal(revisions.length, 2);
  assert.equal((await json(['dashboards', 'restore', dash.id, revisions[1].id])).name, 'Every');
  // Only a workspace overview has a default layout: the API's 409, exit 1.
  assert.equal((await refused(['dashboards', 'reset', dash.id], 409)).errors[0].code, 7103);
  assert.deepEqual(await json(['dashboards', 'delete', dash.id, '--yes']), { id: dash.id, deleted: true });

  const snippet = await json(['snippets', 'create', '--name', 'errors', '--source', '-', '--display', 'table'], { stdin: 'select 1' });
  assert.equal(snippet.source, 'select 1');
  assert.ok((await list(['snippets', 'list'])).some((x) => x.id === snippet.id));
  assert.equal((await json(['snippets', 'get', snippet.id])).display_type, 'table');
  assert.equal((await json(['snippets', 'update', snippet.id, '--display', 'none'])).display_type, null);
  assert.equal((await json(['snippets', 'archive', snippet.id])).state, 'archived');
  assert.equal((await json(['snippets', 'unarchive', snippet.id])).state, 'active');
  assert.deepEqual(await json(['snippets', 'delete', snippet.id, '--yes']), { id: snippet.id, deleted: true });

  assert.ok(
    (await json(['metrics', 'list'])).data.some((m: { key: string }) => m.key === 'writes'),
    'not paged: every metric at once',
  );
  const now = Math.floor(h.clock.nowMs() / 1000);
  const iso = (t: number) => new Date(t * 1000).toISOString();
  const series = await json(['metrics', 'series', 'writes', '--from', iso(now - 86400), '--to', iso(now), '--step', '1h']);
  assert.ok(Array.isArray(series.points));
});

test('packages, installs, renders', async () => {
  const pkg = await json(['packages', 'create', '--name', 'every-pkg']);
  const dir = path.join(scratch, 'templates');
  fs.mkdirSync(path.join(dir, 'conf'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'hello.txt'), 'Hello {{who}}\n');
  fs.writeFileSync(path.join(dir, 'conf', 'app.yaml'), 'who: {{who}}\n');
  const v1 = await json(['packages', 'publish', pkg.id, '--semver', '1.0.0', '--dir', dir]);
  assert.deepEqual(Object.keys(v1.files).sort(), ['conf/app.yaml', 'hello.txt']);
  assert.ok((await list(['packages', 'list'])).some((p) => p.id === pkg.id));
  assert.equal((await json(['packages', 'get', pkg.id])).name, 'every-pkg');
  assert.equal((await list(['packages', 'versions', pkg.id]))[0].semver, '1.0.0');
  assert.equal((await json(['packages', 'version', pkg.id, v1.id, '--path', 'hello.txt'])).template, 'Hello {{who}}\n');
  assert.equal((await json(['packages', 'preview', pkg.id, v1.id, '--values', '-'], { stdin: '{"who":"world"}' })).files['hello.txt'], 'Hello world\n');

  const install = await json(['installs', 'create', '--name', 'every-install', '--package', pkg.id, '--package-version', v1.id, '--values', '-'], { stdin: '{"who":"one"}' });
  await runJobs();
  assert.ok((await list(['installs', 'list'])).some((i) => i.id === install.id));
  assert.equal((await json(['installs', 'get', install.id])).last_render.state, 'succeeded');
  const valuesFile = path.join(scratch, 'values.json');
  fs.writeFileSync(valuesFile, '{"who":"two"}');
  assert.deepEqual((await json(['installs', 'update', install.id, '--values', valuesFile])).values, { who: 'two' });
  await runJobs();
  const renders = await list(['installs', 'renders', install.id]);
  assert.equal(renders.length, 2);
  const repo = await json(['installs', 'repository', install.id]);
  assert.match(repo.clone_url, /repository\.git$/);
  const first = renders[1];
  assert.equal((await json(['renders', 'get', first.id])).state, 'succeeded');
  assert.ok((await json(['renders', 'files', first.id])).files.some((f: { path: string }) => f.path === 'hello.txt'));
  const restored = await json(['installs', 'restore', install.id, '--render', first.id, '--timeout', '1m']);
  assert.equal(restored.render.restored_from_render_id, first.id);

  // Issue 50.5: an install deleted (waiting for its operation), then its package.
  const inUse = await wsp(['packages', 'delete', pkg.id, '--yes']);
  assert.equal(inUse.code, 1, 'a package an install uses is refused');
  assert.match(inUse.stderr, new RegExp(install.id));
  const deleted = await json(['installs', 'delete', install.id, '--yes', '--timeout', '1m']);
  assert.equal(deleted.deleted, true);
  assert.equal(deleted.operation.kind, 'install.delete');
  assert.equal((await wsp(['installs', 'get', install.id])).code, 1, 'the install reads 404');
  assert.deepEqual(await json(['packages', 'delete', pkg.id, '--yes']), { id: pkg.id, deleted: true });
});

test('repository change requests: list, show, diff (a unified diff on a terminal, JSON under --json), approve, merge (--yes), close, reopen', async () => {
  const pkg = await json(['packages', 'create', '--name', 'every-changes']);
  const dir = path.join(scratch, 'changes');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'hello.txt'), 'Hello {{who}}\nsecond line\n');
  const v1 = await json(['packages', 'publish', pkg.id, '--semver', '1.0.0', '--dir', dir]);
  const install = await json(
    ['installs', 'create', '--name', 'every-changes', '--package', pkg.id, '--package-version', v1.id, '--values', '-', '--delivery', 'change_request', '--required-approvals', '1'],
    {
      stdin: '{"who":"one"}',
    },
  );
  assert.equal(install.delivery, 'change_request');
  const waiting = await wsp(['installs', 'update', install.id, '--values', '-'], { stdin: '{"who":"two"}' });
  assert.equal(waiting.code, 0, waiting.stderr);
  assert.match(waiting.stderr, /waits for review in change request rcr_\w+/);
  const [cr] = await list(['changes', 'list', '--install', install.id, '--state', 'open']);
  assert.equal(cr.number, 1);
  assert.equal((await json(['changes', 'show', cr.id])).merge_blockers[0], 'approvals_required');
  const shown = await wsp(['changes', 'show', cr.id]);
  assert.match(shown.stdout, /mergeable:\s+no: needs approvals/);
  assert.deepEqual((await json(['changes', 'diff', cr.id])).files, [{ path: 'hello.txt', status: 'modified', before: 'Hello one\nsecond line\n', after: 'Hello two\nsecond line\n' }]);
  const unified = await wsp(['changes', 'diff', cr.id]);
  assert.equal(unified.code, 0, unified.stderr);
  assert.equal(unified.stdout, 'diff --git a/hello.txt b/hello.txt\n--- a/hello.txt\n+++ b/hello.txt\n@@ -1,2 +1,2 @@\n-Hello one\n+Hello two\n second line\n');
  await refused(['changes', 'approve', cr.id], 403); // the owner caused the render: not their own approval
  const admin = tempConfigDir();
  writeCredentials({ server, token: s.admin.session, user_id: s.admin.userId, workspace: s.workspaceId }, { WSP_CONFIG_DIR: admin });
  assert.equal((await json(['changes', 'approve', cr.id], { configDir: admin })).approvals.length, 1);
  const unconfirmed = await wsp(['changes', 'merge', cr.id]);
  assert.equal(unconfirmed.code, 2, 'a merge outside a terminal needs --yes');
  assert.match(unconfirmed.stderr, /changes the install's main branch, so pass --yes/);
  const stale = await refused(['changes', 'merge', cr.id, '--yes', '--head', '0'.repeat(40)], 409);
  assert.match(stale.message, /no longer the head_commit_sha/);
  const merged = await json(['changes', 'merge', cr.id, '--yes', '--head', cr.head_commit_sha]);
  assert.equal(merged.state, 'merged');
  assert.equal((await json(['installs', 'get', install.id])).open_change_request_id, null);

  await wsp(['installs', 'update', install.id, '--values', '-'], { stdin: '{"who":"three"}' });
  const [second] = await list(['changes', 'list', '--install', install.id, '--state', 'open']);
  assert.equal((await json(['changes', 'close', second.id])).state, 'closed');
  assert.equal((await json(['changes', 'reopen', second.id])).state, 'open');
  const notMergeable = await refused(['changes', 'merge', second.id, '--yes'], 409);
  assert.match(notMergeable.message, /approvals_required/);
  assert.equal((await wsp(['changes', 'list', '--state', 'nope'])).code, 2);
});

test('compute, machines, operations', async () => {
  const catalog = await json(['compute', 'catalog']);
  assert.ok(catalog.server_types.length > 0);
  const config = await json(['compute', 'configs', 'create', '--name', 'every', '--region', 'fsn1', '--image', 'debian-12', '--types', 'cx*']);
  assert.ok((await list(['compute', 'configs', 'list'])).some((x) => x.id === config.id));
  assert.equal((await json(['compute', 'configs', 'get', config.id])).machine_type_filter, 'cx*');

  const started = await json(['machines', 'create', '--config', config.id, '--type', 'cx22', '--no-wait']);
  assert.match(started.operation_id, /^op_/);
  assert.equal((await json(['operations', 'get', started.operation_id])).id, started.operation_id);
  assert.equal((await json(['operations', 'wait', started.operation_id, '--timeout', '1m'])).done, true);
  const machineId = started.machine_id;
  assert.ok((await list(['machines', 'list'])).some((m) => m.id === machineId));
  assert.equal((await json(['machines', 'get', machineId])).status, 'running');
  assert.equal((await json(['machines', 'suspend', machineId])).operation.done, true);
  const suspensions = (await json(['compute', 'suspensions', 'list'])).data;
  const suspension = suspensions.find((x: { hostname: string }) => x.hostname.length > 0);
  assert.ok(suspension, 'the suspended machine is listed');
  assert.ok(ISO.test(suspension.expires_at));
  const resuming = await json(['machines', 'resume', machineId, '--no-wait']);
  assert.equal((await json(['operations', 'wait', resuming.operation_id])).error, null);
  await refused(['machines', 'resume', machineId], 409);
  assert.equal((await json(['machines', 'suspend', machineId])).operation.done, true);
  const again = (await json(['compute', 'suspensions', 'list'])).data.find((x: { hostname: string }) => x.hostname === suspension.hostname);
  assert.equal((await json(['compute', 'suspensions', 'resume', again.id])).operation.done, true);
  assert.equal((await json(['machines', 'delete', machineId, '--yes'])).operation.done, true);
  assert.deepEqual(await json(['compute', 'configs', 'delete', config.id, '--yes']), { id: config.id, deleted: true });
  const other = await json([
    'machines',
    'create',
    '--config',
    (await json(['compute', 'configs', 'create', '--name', 'again', '--region', 'fsn1', '--image', 'debian-12'])).id,
    '--type',
    'cx22',
    '--timeout',
    '1m',
  ]);
  assert.equal(other.operation.done, true);
});

test('regions and clusters; machines and installs placed on a cluster', async () => {
  const regions = await list(['regions', 'list']);
  assert.deepEqual(
    regions.map((r) => r.id),
    ['fsn1', 'nbg1', 'hel1'],
  );
  assert.ok(regions.every((r) => r.server_types.includes('cx22')));
  const cluster = await json(['clusters', 'create', '--name', 'every-cl', '--region', 'nbg1', '--description', 'every']);
  assert.deepEqual([cluster.status, cluster.region, cluster.is_default], ['empty', 'nbg1', false]);
  assert.ok((await list(['clusters', 'list'])).some((c) => c.id === cluster.id));
  assert.equal((await json(['clusters', 'get', cluster.id])).machine_counts.total, 0);
  assert.equal((await json(['clusters', 'rename', cluster.id, '--name', 'every-cl-2'])).name, 'every-cl-2');
  const config = await json(['compute', 'configs', 'create', '--name', 'every-nbg', '--region', 'nbg1', '--image', 'debian-12']);
  const made = await json(['machines', 'create', '--config', config.id, '--type', 'cx22', '--cluster', cluster.id, '--timeout', '1m']);
  assert.equal(made.operation.done, true);
  assert.deepEqual(
    (await list(['machines', 'list', '--cluster', cluster.id])).map((m) => m.id),
    [made.machine_id],
  );
  assert.equal((await json(['clusters', 'get', cluster.id])).status, 'ready');

  const pkg = await json(['packages', 'create', '--name', 'every-cl-pkg']);
  const dir = path.join(scratch, 'cl-templates');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  const v1 = await json(['packages', 'publish', pkg.id, '--semver', '1.0.0', '--dir', dir]);
  const install = await json(['installs', 'create', '--name', 'every-cl-install', '--package', pkg.id, '--package-version', v1.id, '--cluster', cluster.id, '--timeout', '1m']);
  assert.equal(install.cluster_id, cluster.id);
  assert.deepEqual(
    (await list(['installs', 'list', '--cluster', cluster.id])).map((i) => i.id),
    [install.id],
  );
  // Refused while it holds the machine and the install: the error names both.
  const held = await refused(['clusters', 'delete', cluster.id, '--yes'], 409);
  assert.match(held.message, new RegExp(`${made.machine_id}.*${install.id}`));
  assert.equal((await json(['installs', 'update', install.id, '--no-cluster'])).cluster_id, null);
  assert.deepEqual(await list(['installs', 'list', '--cluster', cluster.id]), []);
  assert.equal((await json(['installs', 'update', install.id, '--cluster', cluster.id])).cluster_id, cluster.id);
  assert.equal((await json(['installs', 'update', install.id, '--no-cluster'])).cluster_id, null);
  assert.equal((await json(['machines', 'delete', made.machine_id, '--yes', '--timeout', '1m'])).operation.done, true);
  assert.deepEqual(await json(['clusters', 'delete', cluster.id, '--yes']), { id: cluster.id, deleted: true });
});

test('audit log and webhooks', async () => {
  const events = await list(['audit', 'list', '--type', 'secret.*', '--limit', '5', '--from', '2000-01-01']);
  assert.ok(events.length > 0 && events.every((e) => e.type.startsWith('secret.') && ISO.test(e.created_at)));
  assert.deepEqual(await list(['audit', 'list', '--type', 'secret.*', '--to', '2000-01-01']), []);
  const mine = await list(['audit', 'mine', '--type', 'session.*']);
  assert.ok(mine.every((e) => e.type.startsWith('session.') && e.workspace_id === null));
  const hook = await json(['webhooks', 'create', '--url', 'https://93.184.216.34/hook', '--events', 'secret.*']);
  assert.match(hook.secret, /^whsec_/);
  assert.ok((await list(['webhooks', 'list'], ['url_policy'])).some((w) => w.id === hook.id));
  assert.deepEqual((await json(['webhooks', 'get', hook.id])).event_types, ['secret.*']);
  assert.equal((await json(['webhooks', 'update', hook.id, '--description', 'every', '--events', 'secret.*,install.*'])).description, 'every');
  const delivery = await json(['webhooks', 'test', hook.id]);
  const deliveries = await list(['webhooks', 'deliveries', hook.id]);
  assert.ok(deliveries.some((d) => d.id === delivery.id));
  // No job has run: none made yet (test/cli/client-events.test.ts reads them from a receiver).
  assert.deepEqual(await list(['webhooks', 'attempts', hook.id, delivery.id]), []);
  assert.equal((await json(['webhooks', 'retry', hook.id, delivery.id])).id, delivery.id);
  assert.deepEqual(await json(['webhooks', 'delete', hook.id, '--yes']), { id: hook.id, deleted: true });
});

test('wsp api: any operation, fields as query or body, --paginate, an error answer exit 1', async () => {
  const made = await json(['api', 'POST', 'secrets', '-f', 'name=via-api']);
  assert.match(made.id, /^sec_/);
  await json(['api', 'POST', '/v1/secrets', '-F', 'name=via-api-2']);
  const page = await json(['api', 'GET', 'secrets', '-F', 'limit=1']);
  assert.equal(page.data.length, 1);
  const all = await json(['api', 'GET', '/v1/secrets', '-F', 'limit=1', '--paginate']);
  assert.ok(all.data.length >= 2);
  assert.equal(all.next_cursor, null);
  const missing = await wsp(['api', 'GET', `secrets/sec_01jd0000000000000000000000`, '--json']);
  assert.equal(missing.code, 1);
  assert.equal(JSON.parse(missing.stdout).errors[0].code, 7002, 'the answer is printed as it came');
  assert.equal(JSON.parse(missing.stderr).error.status, 404);
  // --input sends a whole body (here from stdin); -H adds headers, an Idempotency-Key among them.
  const body = JSON.stringify({ name: 'via-input' });
  const once = await json(['api', 'POST', 'secrets', '--input', '-', '-H', 'Idempotency-Key: every-1'], { stdin: body });
  const replay = await json(['api', 'POST', 'secrets', '--input', '-', '-H', 'Idempotency-Key: every-1'], { stdin: body });
  assert.equal(replay.id, once.id, 'the same key replays the first answer: nothing made twice');
  const both = await wsp(['api', 'POST', 'secrets', '-f', 'name=x', '--input', '-'], { stdin: body });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /give fields \(-f, -F\) or --input, not both/);
  const bad = await wsp(['api', 'FETCH', 'secrets']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /the method is one of GET, POST, PUT, PATCH, DELETE/);
});

test('completion scripts: bash completes commands, subcommands and flags', async () => {
  const script = path.join(scratch, 'wsp.bash');
  fs.writeFileSync(script, (await wsp(['completion', 'bash'])).stdout);
  const complete = (line: string) => {
    const words = line.split(' ');
    const program = `source ${JSON.stringify(script)}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')}); COMP_CWORD=${words.length - 1}; _wsp; echo "\${COMPREPLY[*]}"`;
    return execFileSync('bash', ['-c', program], { encoding: 'utf8' }).trim().split(' ').filter(Boolean).sort();
  };
  assert.deepEqual(complete('wsp tok'), ['tokens']);
  assert.deepEqual(complete('wsp tokens '), ['create', 'list', 'revoke']);
  assert.deepEqual(complete('wsp tokens create --'), ['--expires-in', '--help', '--json', '--name', '--scopes', '--yes']);
  assert.deepEqual(complete('wsp compute configs '), ['create', 'delete', 'get', 'list']);
  assert.deepEqual(complete('wsp --json machines delete mch_1 --y'), ['--yes']);
  assert.ok(complete('wsp ').includes('serve'));

  const zsh = (await wsp(['completion', 'zsh'])).stdout;
  assert.match(zsh, /^#compdef wsp\n/);
  assert.match(zsh, /bashcompinit/);
  const fish = (await wsp(['completion', 'fish'])).stdout;
  for (const name of NAMES) assert.ok(fish.includes(`-a '${name.split(' ').pop()}'`), `fish completes ${name}`);
  const unknown = await wsp(['completion', 'powershell']);
  assert.equal(unknown.code, 2);
});

test('exit codes: 2 usage, 3 not logged in, 4 unreachable; --json errors are one document on stderr', async () => {
  const usage = await wsp(['--json', 'tokens', 'create']);
  assert.equal(usage.code, 2);
  assert.deepEqual(JSON.parse(usage.stderr), { error: { kind: 'usage', message: '--name is required', exit_code: 2 } });
  const notLoggedIn = await wsp(['secrets', 'list', '--json'], { configDir: tempConfigDir() });
  assert.equal(notLoggedIn.code, 3);
  assert.equal(JSON.parse(notLoggedIn.stderr).error.kind, 'not_logged_in');
  const down = await wsp(['secrets', 'list', '--json'], { configDir: tempConfigDir(), env: { WSP_TOKEN: s.apiToken, WSP_SERVER: 'http://127.0.0.1:9' } });
  assert.equal(down.code, 4);
  assert.equal(JSON.parse(down.stderr).error.kind, 'unreachable');
  const refusedDelete = await wsp(['secrets', 'delete', 'sec_01jd0000000000000000000000']);
  assert.equal(refusedDelete.code, 2, 'a destructive command outside a terminal needs --yes');
  assert.match(refusedDelete.stderr, /pass --yes to confirm/);
});

test('a destructive command on a terminal asks first: only y goes on', async () => {
  const secret = await json(['secrets', 'create', 'asked']);
  const no = await wsp(['secrets', 'delete', secret.id], { terminal: true, stdin: 'n\n' });
  assert.equal(no.code, 1);
  assert.match(no.stderr, /Delete secret sec_\w+\? Every version of it is erased\. This cannot be undone\. \[y\/N\] error: Cancelled; nothing was changed\./);
  assert.equal((await json(['secrets', 'get', secret.id])).id, secret.id);
  const yes = await wsp(['secrets', 'delete', secret.id], { terminal: true, stdin: 'y\n' });
  assert.equal(yes.code, 0, yes.stderr);
  await refused(['secrets', 'get', secret.id], 404);
});

test('every client command was run above (or has its own file)', () => {
  assert.deepEqual(
    NAMES.filter((n) => !ran.has(n) && !ELSEWHERE.has(n)),
    [],
  );
});
