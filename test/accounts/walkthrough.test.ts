import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJsonOf, api, runWsp, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';

/**
 * Issue 16's "done when", as a newcomer does it with real processes and plain HTTP: the operator
 * bootstraps with an email and a password on stdin, signs in, invites a second address, which
 * accepts with a password; both are listed; the second signs in, leaves, and is refused on their
 * next request. On PostgreSQL two `wsp serve` share the database and the steps alternate between
 * them (a removal holds on every instance); on SQLite there is one.
 */
let tdb: TestDatabase;
const servers: ServerProcess[] = [];
const OWNER = { email: 'me@example.com', password: 'my own long password' };
const SECOND = { email: 'you@example.com', password: 'your own long password' };

before(async () => {
  tdb = await openTestDatabase();
  servers.push(...(await Promise.all(Array.from({ length: ENGINE === 'postgres' ? 2 : 1 }, () => startServer(tdb.env, ['--no-worker'])))));
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await tdb.cleanup();
});

let step = 0;
/** The next step's server: alternating when there are two. */
const next = () => servers[step++ % servers.length]!.url;

test('bootstrap with a password, sign in, invite, accept, list, sign in as the second, leave, refused', async () => {
  registerSecret(OWNER.password, SECOND.password);
  const args = ['bootstrap', '--email', OWNER.email, '--password-stdin'];
  const boot = adminJsonOf(args, await runWsp(['admin', ...args, '--json'], tdb.env, 60_000, `${OWNER.password}\n`));
  const ws = boot.workspace_id!;

  const signIn = await api(next(), 'POST', '/v1/sessions', { body: OWNER });
  assert.equal(signIn.status, 201, signIn.text);
  const token = signIn.body.token as string;

  const invited = await api(next(), 'POST', `/v1/workspaces/${ws}/invitations`, { credential: token, workspaceId: ws, body: { email: SECOND.email, role: 'member' } });
  assert.equal(invited.status, 201, invited.text);
  const secret = (invited.body.url as string).split('#')[1]!;
  registerSecret(secret);

  const accepted = await api(next(), 'POST', '/v1/invitations:accept', { body: { token: secret, name: 'You', password: SECOND.password } });
  assert.equal(accepted.status, 200, accepted.text);
  assert.match(accepted.headers.get('set-cookie') ?? '', /^wsp_session=/);
  const secondId = accepted.body.user_id as string;

  const members = await api(next(), 'GET', `/v1/workspaces/${ws}/members`, { credential: token, workspaceId: ws });
  assert.deepEqual(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role]).sort(), [
    [OWNER.email, 'owner'],
    [SECOND.email, 'member'],
  ]);

  const second = await api(next(), 'POST', '/v1/sessions', { body: SECOND });
  assert.equal(second.status, 201, second.text);
  const secondToken = second.body.token as string;
  assert.equal((await api(next(), 'GET', '/v1/me', { credential: secondToken, workspaceId: ws })).body.role, 'member');

  const left = await api(next(), 'DELETE', `/v1/workspaces/${ws}/members/${secondId}`, { credential: secondToken, workspaceId: ws });
  assert.equal(left.status, 204, left.text);
  for (let i = 0; i < servers.length; i++) {
    const refused = await api(next(), 'GET', '/v1/me', { credential: secondToken, workspaceId: ws });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.errors[0].code, 7022);
  }
  const after = await api(next(), 'GET', `/v1/workspaces/${ws}/members`, { credential: token, workspaceId: ws });
  assert.deepEqual(
    after.body.data.map((m: { email: string }) => m.email),
    [OWNER.email],
  );
});
