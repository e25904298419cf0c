import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { writeCredentials } from '../../src/cli/client/credentials.js';
import { removeTempConfigDirs, runCli, tempConfigDir } from './cli-harness.js';

/** The client commands in process against a listening server (login itself: client-login.test.ts). */
let server: string;
const h = useTestApp({
  setup: async () => {
    server = await h.app.listen({ port: 0, host: '127.0.0.1' });
  },
  teardown: async () => {
    removeTempConfigDirs();
  },
});
const s = h.seeded;

/** A config directory logged in as `userId` with a session of its own. */
async function loggedIn(userId: string, workspace: string | null = s.workspaceId): Promise<string> {
  const configDir = tempConfigDir();
  const { session_token } = await h.admin.createSession(userId);
  writeCredentials({ server, token: session_token, user_id: userId, workspace }, { WSP_CONFIG_DIR: configDir });
  return configDir;
}

describe('usage', () => {
  test('bad command lines exit 2 with the command’s usage; --help exits 0 for every command', async () => {
    const configDir = await loggedIn(s.owner.userId);
    for (const argv of [
      ['tokens', 'create'],
      ['tokens', 'create', '--name', 'x', '--colour', 'red'],
      ['tokens', 'revoke'],
      ['tokens', 'revoke', 'not an id'],
      ['tokens', 'frobnicate'],
      ['secrets'],
      ['notifications', 'list', '--limit', '0'],
      ['tokens', 'list', 'extra'],
    ]) {
      const run = await runCli(argv, { configDir });
      assert.equal(run.code, 2, `${argv.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /error: |wsp /);
    }
    for (const argv of [
      ['login'],
      ['logout'],
      ['whoami'],
      ['workspace', 'use'],
      ['tokens', 'create'],
      ['tokens'],
      ['secrets', 'add-version'],
      ['installs', 'restore'],
      ['dashboards', 'revisions'],
      ['notifications', 'read'],
    ]) {
      const run = await runCli([...argv, '--help'], { configDir });
      assert.equal(run.code, 0, argv.join(' '));
      assert.match(run.stdout, /wsp /);
    }
  });

  test('flags are parsed strictly: an unknown one, a string flag without its value and a boolean given one are named (2)', async () => {
    const configDir = await loggedIn(s.owner.userId);
    for (const [argv, message] of [
      [['tokens', 'create', '--name', 'x', '--colour', 'red'], /error: unknown flag --colour/],
      [['tokens', 'create', '--name'], /error: --name needs a value/],
      [['tokens', 'list', '--json=yes'], /error: unknown flag --json=yes/],
      [['tokens', 'list', '-q'], /error: unknown flag -q/],
    ] as const) {
      const run = await runCli([...argv], { configDir });
      assert.equal(run.code, 2, `${argv.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, argv.join(' '));
      assert.match(run.stderr, /usage: wsp tokens/, 'the command’s usage follows');
    }
    // A flag where a value belongs is a flag, not the value: here --json, so the error is JSON too.
    const flagged = await runCli(['tokens', 'create', '--name', '--json'], { configDir });
    assert.equal(flagged.code, 2);
    assert.deepEqual(JSON.parse(flagged.stderr), { error: { kind: 'usage', message: '--name needs a value', exit_code: 2 } });
  });

  test('a workspace command without a chosen workspace says how to choose one (2)', async () => {
    const run = await runCli(['tokens', 'list'], { configDir: await loggedIn(s.owner.userId, null) });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /wsp workspace use/);
  });
});

describe('wsp workspace', () => {
  test('list marks the one in use; use switches, and refuses a workspace the user is not in (1)', async () => {
    const other = await h.admin.createWorkspace('Other');
    await h.admin.addMember(other.workspace_id, s.owner.userId, 'member');
    const configDir = await loggedIn(s.owner.userId, null);
    const list = await runCli(['workspace', 'list', '--json'], { configDir });
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(
      JSON.parse(list.stdout)
        .data.map((w: { id: string }) => w.id)
        .sort(),
      [s.workspaceId, other.workspace_id].sort(),
    );

    const use = await runCli(['workspace', 'use', other.workspace_id], { configDir });
    assert.equal(use.code, 0, use.stderr);
    assert.match(use.stdout, /Acting in workspace Other/);
    const human = await runCli(['workspace', 'list'], { configDir });
    assert.match(human.stdout, new RegExp(`\\*\\s+${other.workspace_id}\\s+Other\\s+member`));

    const stranger = await h.admin.createWorkspace('Stranger');
    const refused = await runCli(['workspace', 'use', stranger.workspace_id], { configDir });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /403: .*not a member/);
    const saved = JSON.parse(fs.readFileSync(path.join(configDir, 'credentials.json'), 'utf8'));
    assert.equal(saved.workspace, other.workspace_id, 'unchanged after a refusal');
    assert.equal((await runCli(['workspace', 'use', 'wsx'], { configDir })).code, 2);
  });
});

describe('wsp workspace quotas', () => {
  test('the figures of the workspace in use, in a table and in JSON', async () => {
    const configDir = await loggedIn(s.member.userId);
    const json = await runCli(['workspace', 'quotas', '--json'], { configDir });
    assert.equal(json.code, 0, json.stderr);
    const q = JSON.parse(json.stdout);
    assert.deepEqual(q.api_tokens, { limit: 100, used: 1 });
    assert.deepEqual(q.render_output_bytes, { limit: 8 * 1024 * 1024 });
    const table = await runCli(['workspace', 'quotas'], { configDir });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /API tokens\s+1\s+100/);
    assert.match(table.stdout, /output per render\s+-\s+8 MiB/);
    assert.match(table.stdout, /repository per install\s+-\s+256 MiB/);
    assert.match(table.stdout, /repositories together\s+0 B\s+2 GiB/);
    assert.match(table.stdout, /workspaces you own\s+0\s+10/);
    const none = await runCli(['workspace', 'quotas'], { configDir: await loggedIn(s.member.userId, null) });
    assert.equal(none.code, 2);
  });
});

describe('wsp sessions', () => {
  test("list marks this login; revoke ends another session at once; another user's is refused (404, exit 1)", async () => {
    const configDir = await loggedIn(s.admin.userId);
    const { session_token: other } = await h.admin.createSession(s.admin.userId);
    const list = await runCli(['sessions', 'list', '--json'], { configDir });
    assert.equal(list.code, 0, list.stderr);
    const listed = JSON.parse(list.stdout).data as { id: string; current: boolean; issued_by: string }[];
    assert.ok(listed.length >= 2);
    assert.equal(listed.filter((x) => x.current).length, 1);
    assert.ok(!list.stdout.includes(other), 'never a token');
    const table = await runCli(['sessions', 'list'], { configDir });
    assert.match(table.stdout, /^ID +ISSUED BY +FROM +CLIENT +LAST USED +ENDS$/m);
    assert.match(table.stdout, /^\* ses_[0-9a-z]+ +operator/m);

    const otherId = listed.find((x) => !x.current)!.id;
    const revoked = await runCli(['sessions', 'revoke', otherId, '--yes'], { configDir });
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, new RegExp(`^Revoked ${otherId}\\.$`, 'm'));
    // The one just revoked may be the other session, or an older one of the admin's: either is gone now.
    const remaining = (JSON.parse((await runCli(['sessions', 'list', '--json'], { configDir })).stdout).data as { id: string }[]).map((x) => x.id);
    assert.ok(!remaining.includes(otherId));

    const ownerSession = (await h.app.inject({ method: 'GET', url: '/v1/sessions', headers: as(s.owner.session) })).json().data[0].id;
    const refused = await runCli(['sessions', 'revoke', ownerSession, '--yes'], { configDir });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /404: .*\[7002\]/);
    assert.equal((await runCli(['sessions', 'revoke', 'not an id', '--yes'], { configDir })).code, 2);
  });
});

describe('wsp tokens', () => {
  test('create, list and revoke, in JSON and in tables', async () => {
    const configDir = await loggedIn(s.owner.userId);
    const created = await runCli(['tokens', 'create', '--name', 'ci', '--expires-in', '30d', '--json'], { configDir });
    assert.equal(created.code, 0, created.stderr);
    const token = JSON.parse(created.stdout);
    assert.match(token.token, /^sk_svc_/);
    // Times are ISO 8601 under --json.
    assert.match(token.expires_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.ok(Date.parse(token.expires_at) > Date.now() + 29 * 86400_000);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(token.token) })).statusCode, 200);

    const human = await runCli(['tokens', 'create', '--name', 'people'], { configDir });
    assert.match(human.stdout, /^id: +tok_/m);
    assert.match(human.stdout, /^token: +sk_svc_/m);
    assert.match(human.stderr, /never shown again/);

    const list = await runCli(['tokens', 'list', '--json'], { configDir });
    const listed = JSON.parse(list.stdout).data as { id: string; prefix: string }[];
    assert.ok(listed.some((t) => t.id === token.id && t.prefix === token.token.slice(0, 12)));
    assert.ok(!list.stdout.includes(token.token), 'never the secret');
    const table = await runCli(['tokens', 'list'], { configDir });
    assert.match(table.stdout, /^ID +NAME +PREFIX +CREATED +EXPIRES +LAST USED +SCOPES$/m);
    assert.match(table.stdout, new RegExp(`^${token.id} +ci +sk_svc_.* all$`, 'm'));

    const revoked = await runCli(['tokens', 'revoke', token.id, '--yes'], { configDir });
    assert.equal(revoked.code, 0);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(token.token) })).statusCode, 401);
    const again = await runCli(['tokens', 'revoke', token.id, '--yes'], { configDir });
    assert.equal(again.code, 1, 'the API’s 404 is exit 1');
    assert.match(again.stderr, /404: .*\[7002\]/);
  });

  test('the API’s refusal is exit 1 with its message: a member cannot create tokens', async () => {
    const run = await runCli(['tokens', 'create', '--name', 'nope'], { configDir: await loggedIn(s.member.userId) });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /403: .*owner or admin.*\[7023\]/);
  });

  test('--scopes limits the token; an unknown scope is a usage error naming the scopes', async () => {
    const configDir = await loggedIn(s.owner.userId);
    const created = await runCli(['tokens', 'create', '--name', 'reader', '--scopes', 'secrets:read, installs:write', '--json'], { configDir });
    assert.equal(created.code, 0, created.stderr);
    const token = JSON.parse(created.stdout);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/secrets', headers: as(token.token) })).statusCode, 200);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/dashboards', headers: as(token.token) })).statusCode, 403);
    const table = await runCli(['tokens', 'list'], { configDir });
    assert.match(table.stdout, new RegExp(`^${token.id} +reader .* installs:write secrets:read$`, 'm'));
    const bad = await runCli(['tokens', 'create', '--name', 'x', '--scopes', 'secrets:read,root'], { configDir });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown scope root; the scopes are dashboards:read, /);
  });

  test('a bad --expires-in is a usage error', async () => {
    const run = await runCli(['tokens', 'create', '--name', 'x', '--expires-in', 'soon'], { configDir: await loggedIn(s.owner.userId) });
    assert.equal(run.code, 2);
  });
});

describe('wsp notifications', () => {
  test('list (all or --unread) and read', async () => {
    const now = Math.floor(h.clock.nowMs() / 1000);
    const id = 'ntf_01jd0000000000000000000000';
    await h.database.db
      .insertInto('notifications')
      .values({
        id,
        user_id: s.admin.userId,
        type: 'machine_expiry',
        resource_type: 'machine',
        resource_id: 'mch_x',
        title: 'Machine expires soon',
        body: 'b',
        severity: 'info',
        context: '{}',
        read_at: null,
        created_at: now,
        dedupe_key: null,
      })
      .execute();
    const configDir = await loggedIn(s.admin.userId);
    const unread = await runCli(['notifications', 'list', '--unread', '--json'], { configDir });
    assert.equal(unread.code, 0, unread.stderr);
    assert.deepEqual(
      JSON.parse(unread.stdout).data.map((n: { id: string }) => n.id),
      [id],
    );
    const table = await runCli(['notifications', 'list'], { configDir });
    assert.match(table.stdout, /Machine expires soon/);

    const read = await runCli(['notifications', 'read', id], { configDir });
    assert.equal(read.code, 0, read.stderr);
    assert.deepEqual(JSON.parse((await runCli(['notifications', 'list', '--unread', '--json'], { configDir })).stdout).data, []);
    const none = await runCli(['notifications', 'list', '--unread'], { configDir });
    assert.match(none.stdout, /No unread notifications/);
    assert.equal(JSON.parse((await runCli(['notifications', 'list', '--json'], { configDir })).stdout).data.length, 1);
  });
});

describe('wsp secrets', () => {
  test('create names the secret with --name, as every create does; the positional form still works; both at once is usage', async () => {
    const configDir = await loggedIn(s.member.userId);
    const flagged = await runCli(['secrets', 'create', '--name', 'named-by-flag', '--json'], { configDir });
    assert.equal(flagged.code, 0, flagged.stderr);
    assert.equal(JSON.parse(flagged.stdout).name, 'named-by-flag');
    const both = await runCli(['secrets', 'create', 'one', '--name', 'two'], { configDir });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give the name once: --name NAME/);
    const help = await runCli(['secrets', 'create', '--help'], { configDir });
    assert.match(help.stdout, /wsp secrets create --name NAME/);
  });

  test('round trip: create, add versions from stdin and a file, access byte for byte, disable, enable, destroy', async () => {
    const configDir = await loggedIn(s.member.userId);
    const created = await runCli(['secrets', 'create', 'db-password', '--json'], { configDir });
    assert.equal(created.code, 0, created.stderr);
    const secret = JSON.parse(created.stdout);

    const binary = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]);
    const v1 = await runCli(['secrets', 'add-version', secret.id, '--comment', 'first', '--json'], { configDir, stdin: binary });
    assert.equal(v1.code, 0, v1.stderr);
    const version1 = JSON.parse(v1.stdout);
    assert.equal(version1.version_number, 1);

    const file = path.join(configDir, 'payload.txt');
    fs.writeFileSync(file, 'hunter2\n');
    const v2 = await runCli(['secrets', 'add-version', secret.id, '--file', file], { configDir });
    assert.equal(v2.code, 0, v2.stderr);
    assert.match(v2.stdout, /Added version 2 \(secv_/);

    const raw = await runCli(['secrets', 'access', secret.id, version1.id], { configDir });
    assert.equal(raw.code, 0, raw.stderr);
    assert.deepEqual(raw.stdoutBytes, binary, 'raw bytes on stdout');
    const asJson = await runCli(['secrets', 'access', secret.id, version1.id, '--json'], { configDir });
    assert.deepEqual(JSON.parse(asJson.stdout), { id: version1.id, data: binary.toString('base64') });
    const outFile = path.join(configDir, 'out.bin');
    // An existing file others can read is made private before the payload goes in.
    fs.writeFileSync(outFile, 'old', { mode: 0o644 });
    fs.chmodSync(outFile, 0o644);
    assert.equal((await runCli(['secrets', 'access', secret.id, version1.id, '--output', outFile], { configDir })).code, 0);
    assert.deepEqual(fs.readFileSync(outFile), binary);
    assert.equal(fs.statSync(outFile).mode & 0o777, 0o600);

    const disabled = await runCli(['secrets', 'disable', secret.id, version1.id, '--json'], { configDir });
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal(JSON.parse(disabled.stdout).state, 'disabled');
    const refused = await runCli(['secrets', 'access', secret.id, version1.id], { configDir });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: 409/);
    assert.equal((await runCli(['secrets', 'enable', secret.id, version1.id], { configDir })).code, 0);
    assert.equal((await runCli(['secrets', 'access', secret.id, version1.id], { configDir })).code, 0);

    // Destroying is irreversible: a member is refused it (exit 1, the API's 403), an admin or owner does it.
    const byMember = await runCli(['secrets', 'destroy', secret.id, version1.id, '--yes'], { configDir });
    assert.equal(byMember.code, 1);
    assert.match(byMember.stderr, /^error: 403: This needs the workspace role owner or admin \[7023\]/);
    const destroyed = await runCli(['secrets', 'destroy', secret.id, version1.id, '--yes'], { configDir: await loggedIn(s.owner.userId) });
    assert.equal(destroyed.code, 0, destroyed.stderr);
    assert.match(destroyed.stdout, /state: +destroyed/);
    assert.equal((await runCli(['secrets', 'access', secret.id, version1.id], { configDir })).code, 1);

    const versions = JSON.parse((await runCli(['secrets', 'versions', secret.id, '--json'], { configDir })).stdout).data;
    assert.deepEqual(
      versions.map((v: { version_number: number; state: string }) => [v.version_number, v.state]),
      [
        [2, 'enabled'],
        [1, 'destroyed'],
      ],
    );
    const list = await runCli(['secrets', 'list'], { configDir });
    assert.match(list.stdout, new RegExp(`${secret.id} +db-password`));
  });

  test('bad payloads: empty stdin, over 64 KiB, a missing file (exit 1); a wrong secret id (404, exit 1)', async () => {
    const configDir = await loggedIn(s.member.userId);
    const secret = JSON.parse((await runCli(['secrets', 'create', 'limits', '--json'], { configDir })).stdout);
    const empty = await runCli(['secrets', 'add-version', secret.id], { configDir, stdin: '' });
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /empty/);
    const big = await runCli(['secrets', 'add-version', secret.id], { configDir, stdin: Buffer.alloc(65537, 1) });
    assert.equal(big.code, 1);
    assert.match(big.stderr, /64 KiB/);
    const exact = await runCli(['secrets', 'add-version', secret.id], { configDir, stdin: Buffer.alloc(65536, 1) });
    assert.equal(exact.code, 0, exact.stderr);
    const missing = await runCli(['secrets', 'add-version', secret.id, '--file', path.join(configDir, 'nope')], { configDir });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /ENOENT/);
    const unknown = await runCli(['secrets', 'add-version', 'sec_01jd0000000000000000000000'], { configDir, stdin: 'x' });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /404/);
  });
});

const json = async (argv: string[], configDir: string) => {
  const run = await runCli([...argv, '--json'], { configDir });
  assert.equal(run.code, 0, `${argv.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout);
};

describe('wsp workspace create, members, invitations', () => {
  test('workspace create makes the caller owner', async () => {
    const configDir = await loggedIn(s.member.userId, null);
    const ws = await json(['workspace', 'create', '--name', 'From the CLI'], configDir);
    assert.equal(ws.role, 'owner');
    const human = await runCli(['workspace', 'create', '--name', 'Another'], { configDir });
    assert.match(human.stdout, /Made workspace Another \(ws_[0-9a-z]+\); you are its owner/);
    assert.equal((await runCli(['workspace', 'create'], { configDir })).code, 2);
  });

  test("members list, role and remove, with the API's refusals as exit 1", async () => {
    const owner = await loggedIn(s.owner.userId);
    const listed = await json(['members', 'list'], owner);
    assert.deepEqual(listed.data.map((m: { role: string }) => m.role).sort(), ['admin', 'member', 'owner']);
    const table = await runCli(['members', 'list'], { configDir: owner });
    assert.match(table.stdout, new RegExp(`${s.admin.userId}\\s+admin\\s+admin`));

    const { user_id } = await h.admin.createUser({ name: 'Temp', email: `temp-${Date.now()}@example.com` });
    await h.admin.addMember(s.workspaceId, user_id, 'member');
    assert.equal((await json(['members', 'role', user_id, 'admin'], owner)).role, 'admin');
    assert.equal((await runCli(['members', 'role', user_id, 'boss'], { configDir: owner })).code, 2);
    const byMember = await runCli(['members', 'remove', user_id, '--yes'], { configDir: await loggedIn(s.member.userId) });
    assert.equal(byMember.code, 1);
    assert.match(byMember.stderr, /403/);
    assert.deepEqual(await json(['members', 'remove', user_id, '--yes'], owner), { user_id, removed: true });
    const last = await runCli(['members', 'role', s.owner.userId, 'member'], { configDir: owner });
    assert.equal(last.code, 1);
    assert.match(last.stderr, /409: .*owner/);
  });

  test('invitations create (the link shown once), list and revoke', async () => {
    const admin = await loggedIn(s.admin.userId);
    const made = await runCli(['invitations', 'create', '--email', 'guest@example.com'], { configDir: admin });
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /link:\s+http:\/\/localhost:8080\/console\/invite#inv_/);
    assert.match(made.stderr, /never shown again/);
    const listed = await json(['invitations', 'list'], admin);
    const inv = listed.data.find((i: { email: string }) => i.email === 'guest@example.com');
    assert.equal(inv.role, 'member');
    assert.deepEqual(await json(['invitations', 'revoke', inv.id, '--yes'], admin), { id: inv.id, revoked: true });
    assert.ok(!(await json(['invitations', 'list'], admin)).data.some((i: { id: string }) => i.id === inv.id));
    const owner = await runCli(['invitations', 'create', '--email', 'boss@example.com', '--role', 'owner'], { configDir: admin });
    assert.equal(owner.code, 1, 'only an owner invites an owner');
  });
});
