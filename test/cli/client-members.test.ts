import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp, type Seed } from '../helpers/harness.js';
import { writeCredentials } from '../../src/cli/client/credentials.js';
import { removeTempConfigDirs, runCli, tempConfigDir } from './cli-harness.js';

/** wsp workspace create, wsp members ..., wsp invitations ... against a listening server. */
let h: TestApp;
let s: Seed;
let server: string;
before(async () => {
  h = await createTestApp();
  s = await h.seed();
  server = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  removeTempConfigDirs();
  await h.close();
});

async function loggedIn(userId: string, workspace: string | null = s.workspaceId): Promise<string> {
  const configDir = tempConfigDir();
  const { session_token } = await h.admin.createSession(userId);
  writeCredentials({ server, token: session_token, user_id: userId, workspace }, { WSP_CONFIG_DIR: configDir });
  return configDir;
}

const json = async (argv: string[], configDir: string) => {
  const run = await runCli([...argv, '--json'], { configDir });
  assert.equal(run.code, 0, `${argv.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout);
};

test('workspace create makes the caller owner', async () => {
  const configDir = await loggedIn(s.member.userId, null);
  const ws = await json(['workspace', 'create', '--name', 'From the CLI'], configDir);
  assert.equal(ws.role, 'owner');
  const human = await runCli(['workspace', 'create', '--name', 'Another'], { configDir });
  assert.match(human.stdout, /Made workspace Another \(ws_[0-9a-z]+\); you are its owner/);
  assert.equal((await runCli(['workspace', 'create'], { configDir })).code, 2);
});

test('members list, role and remove, with the API\'s refusals as exit 1', async () => {
  const owner = await loggedIn(s.owner.userId);
  const listed = await json(['members', 'list'], owner);
  assert.deepEqual(listed.data.map((m: { role: string }) => m.role).sort(), ['admin', 'member', 'owner']);
  const table = await runCli(['members', 'list'], { configDir: owner });
  assert.match(table.stdout, new RegExp(`${s.admin.userId}\\s+admin\\s+admin`));

  const { user_id } = await h.admin.createUser({ name: 'Temp', email: `temp-${Date.now()}@example.com` });
  await h.admin.addMember(s.workspaceId, user_id, 'member');
  assert.equal((await json(['members', 'role', user_id, 'admin'], owner)).role, 'admin');
  assert.equal((await runCli(['members', 'role', user_id, 'boss'], { configDir: owner })).code, 2);
  const byMember = await runCli(['members', 'remove', user_id], { configDir: await loggedIn(s.member.userId) });
  assert.equal(byMember.code, 1);
  assert.match(byMember.stderr, /403/);
  assert.deepEqual(await json(['members', 'remove', user_id], owner), { user_id, removed: true });
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
  assert.deepEqual(await json(['invitations', 'revoke', inv.id], admin), { id: inv.id, revoked: true });
  assert.ok(!(await json(['invitations', 'list'], admin)).data.some((i: { id: string }) => i.id === inv.id));
  const owner = await runCli(['invitations', 'create', '--email', 'boss@example.com', '--role', 'owner'], { configDir: admin });
  assert.equal(owner.code, 1, 'only an owner invites an owner');
});
