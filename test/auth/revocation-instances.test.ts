import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { client, masterKey } from '../reliability/servers.js';

/**
 * Issue 54: the credential lookups of one turn of the event loop share one statement
 * (src/db/credential-rows.ts). A revocation made through one `wsp serve` is still refused by the
 * other on its very next request, while the live credentials looked up in the same statements keep
 * answering 200: two processes on one PostgreSQL; one process on SQLite (one process by design).
 * Requests go in bursts, so that each burst's lookups meet in one turn, the revoked one among them.
 */
const COUNT = ENGINE === 'postgres' ? 2 : 1;
let tdb: TestDatabase;
const servers: ServerProcess[] = [];
let ws: string;
let bootToken: string;
let ownerSession: string;

before(async () => {
  tdb = await openTestDatabase();
  const boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  ws = boot.workspace_id;
  bootToken = boot.api_token;
  ownerSession = boot.session_token;
  const env = { ...tdb.env, WSP_MASTER_KEY: masterKey(), WSP_AUTH_FAILURES_PER_MINUTE: '100000' };
  for (let i = 0; i < COUNT; i++) servers.push(await startServer(env));
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await tdb.cleanup();
});

const first = () => servers[0]!.url;
const last = () => servers[servers.length - 1]!.url;

/** One burst on a server: `n` reads with each credential, all sent at once; their statuses by credential. */
async function burst(base: string, path: string, credentials: Record<string, string>, n = 8): Promise<Record<string, number[]>> {
  const names = Object.keys(credentials);
  const calls = names.flatMap((name) => Array.from({ length: n }, () => client(credentials[name]!, path === '/v1/api_tokens' ? undefined : ws, { retry: false }).call(base, 'GET', path)));
  const answers = await Promise.all(calls);
  return Object.fromEntries(names.map((name, i) => [name, answers.slice(i * n, (i + 1) * n).map((a) => a.status)]));
}

test(`an API token revoked through one of ${COUNT} process(es) is refused by every one on its very next request; the tokens read beside it are not`, async () => {
  const victim = await client(ownerSession, ws).ok(first(), 'POST', '/v1/api_tokens', { name: 'victim' });
  const both = { victim: victim.token as string, bystander: bootToken };
  for (const s of servers) assert.deepEqual(await burst(s.url, '/v1/api_tokens', both), { victim: Array(8).fill(200), bystander: Array(8).fill(200) });
  const del = await client(ownerSession, ws).call(first(), 'DELETE', `/v1/api_tokens/${victim.id}`);
  assert.equal(del.status, 204);
  // The other process first: the very next requests after the 204, in one burst with a live token.
  for (const base of [last(), first()]) assert.deepEqual(await burst(base, '/v1/api_tokens', both), { victim: Array(8).fill(401), bystander: Array(8).fill(200) });
});

test(`a session ended through one of ${COUNT} process(es) is refused by every one on its very next request; the sessions read beside it are not`, async () => {
  const admin = createAdminService(tdb.database.db, systemClock);
  const owner = (await tdb.database.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
  const victim = (await admin.createSession(owner)).session_token;
  const both = { victim, bystander: ownerSession };
  for (const s of servers) assert.deepEqual(await burst(s.url, '/v1/notifications', both), { victim: Array(8).fill(200), bystander: Array(8).fill(200) });
  const del = await client(victim).call(first(), 'DELETE', '/v1/sessions/current');
  assert.equal(del.status, 204);
  for (const base of [last(), first()]) assert.deepEqual(await burst(base, '/v1/notifications', both), { victim: Array(8).fill(401), bystander: Array(8).fill(200) });
});
