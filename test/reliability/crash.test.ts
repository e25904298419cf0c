import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, startServer, type ServerProcess } from '../helpers/processes.js';
import { notify } from '../../src/notifications/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, client, git, masterKey, repositories, waitFor } from './servers.js';

/**
 * Issue 9.4: `kill -9` of `wsp serve` in the middle of a storm of writes (API tokens, secret
 * versions, install PATCHes that queue renders, notification reads), on the engine of the run.
 * After a restart on the same database and data directory: every write whose 2xx reached the
 * client is there and whole (tokens authenticate, versions decrypt to what was sent, reads stay
 * read), nothing half-written is visible (every listed version decrypts, every render's commit is
 * on main and every commit on main is a render's), the queued renders resume and finish with the
 * last values, and every repository passes `git fsck --strict`.
 * WSP_CRASH_CYCLES (default 1) storms and kills that many times before checking.
 */
const CYCLES = Number(process.env.WSP_CRASH_CYCLES ?? 1);
const INSTALLS = 3;

let tdb: TestDatabase;
let env: Record<string, string>;
let server: ServerProcess | undefined;
let boot: Record<string, string>;

before(async () => {
  tdb = await openTestDatabase();
  env = { ...tdb.env, WSP_MASTER_KEY: masterKey() };
  boot = await adminJson(['bootstrap'], env);
});
after(async () => {
  await server?.stop('SIGKILL');
  await tdb.cleanup();
});

interface Acked {
  tokens: { id: string; token: string }[];
  versions: { id: string; data: string }[];
  reads: string[];
  /** Per install: the values of the last PATCH answered 200, and of one sent after it (in flight at the kill). */
  values: { acked: string | null; pending: string | null }[];
}

test(`kill -9 during a write storm (${CYCLES} time${CYCLES === 1 ? '' : 's'}): every acknowledged write survives whole, renders resume, repositories pass fsck`, async () => {
  server = await startServer(env);
  const logs = [server.output];
  const c = client(boot.session_token!, boot.workspace_id);
  const base = () => server!.url;
  const pkg = await c.ok(base(), 'POST', '/v1/packages', { name: 'storm' });
  const version = await c.ok(base(), 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n', 'dir/b.txt': '{{who}}!' } });
  const installs: { id: string }[] = [];
  for (let i = 0; i < INSTALLS; i++) installs.push(await c.ok(base(), 'POST', '/v1/installs', { name: `storm-${i}`, package_id: pkg.id, version_id: version.id, values: { who: 'initial' } }));
  const secret = await c.ok(base(), 'POST', '/v1/secrets', { name: 'storm' });
  for (let i = 0; i < 60; i++) {
    await notify(tdb.database.db, systemClock, { userIds: [boot.user_id!], type: 'machine_expiry', resource_type: 'machine', resource_id: `mch_${i}`, title: 't', body: 'b', severity: 'info', context: {} });
  }
  const notices = (await c.all(base(), '/v1/notifications')).map((n: { id: string }) => n.id);
  assert.ok(notices.length >= 60);

  const acked: Acked = { tokens: [], versions: [], reads: [], values: installs.map(() => ({ acked: null, pending: null })) };
  let counter = 0;
  let noticeIndex = 0;

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    if (cycle > 0) logs.push((server = await startServer(env)).output);
    let alive = true;
    const counts = { tokens: 0, versions: 0, reads: 0, patches: 0 };
    /** Runs one kind of write until the server is gone; a write counts only once its 2xx arrived. */
    const lane = async (step: () => Promise<void>) => {
      while (alive) {
        try {
          await step();
        } catch {
          return; // the connection died with the server
        }
      }
    };
    const url = base();
    const lanes = [
      lane(async () => {
        const res = await c.call(url, 'POST', '/v1/api_tokens', { name: `storm-${++counter}` });
        if (res.status === 201) (acked.tokens.push({ id: res.body.id, token: res.body.token }), counts.tokens++);
        else assert.fail(`token: ${res.status} ${res.text}`);
      }),
      lane(async () => {
        const data = Buffer.from(`payload ${++counter} ${'x'.repeat(counter % 300)}`).toString('base64');
        const res = await c.call(url, 'POST', `/v1/secrets/${secret.id}/versions`, { data, comment: `v${counter}` });
        if (res.status === 201) (acked.versions.push({ id: res.body.id, data }), counts.versions++);
        else assert.fail(`version: ${res.status} ${res.text}`);
      }),
      lane(async () => {
        const id = notices[noticeIndex++ % notices.length]!;
        const res = await c.call(url, 'PATCH', `/v1/notifications/${id}/read`);
        if (res.status === 204) (acked.reads.push(id), counts.reads++);
        else assert.fail(`read: ${res.status} ${res.text}`);
      }),
      ...installs.map((inst, i) =>
        lane(async () => {
          const who = `w${++counter}`;
          acked.values[i]!.pending = who;
          const res = await c.call(url, 'PATCH', `/v1/installs/${inst.id}`, { values: { who } }, { 'if-match': '*' });
          if (res.status !== 200) assert.fail(`patch: ${res.status} ${res.text}`);
          acked.values[i] = { acked: who, pending: null };
          counts.patches++;
        }),
      ),
    ];
    // Storm until every kind of write has been acknowledged a few times, then a little more.
    await waitFor('the storm to get going', async () => counts.tokens >= 3 && counts.versions >= 3 && counts.reads >= 3 && counts.patches >= 3 * INSTALLS, 60_000, 20);
    await sleep(200 + Math.random() * 600);
    server.child.kill('SIGKILL');
    await server.exited;
    alive = false;
    await Promise.all(lanes);
    assert.ok(Object.values(counts).every((n) => n > 0), JSON.stringify(counts));
  }

  // A job the dead worker held is taken over once its lease (60 s) runs out: stand in for that
  // minute by ending those leases now, while no process is running.
  const orphaned = Number((await sql`update jobs set locked_until = 0 where state = 'running'`.execute(tdb.database.db)).numAffectedRows ?? 0);
  server = await startServer(env);
  logs.push(server.output);
  const url = server.url;

  // Acknowledged tokens are there and authenticate.
  const listed = new Set((await c.all(url, '/v1/api_tokens')).map((t: { id: string }) => t.id));
  for (const t of acked.tokens) {
    assert.ok(listed.has(t.id), `token ${t.id} was acknowledged`);
    assert.equal((await client(t.token).call(url, 'GET', '/v1/me')).status, 200, `token ${t.id} works`);
  }
  // Acknowledged versions hold what was sent; no listed version is half-written.
  const versions = await c.all(url, `/v1/secrets/${secret.id}/versions`);
  const numbers = versions.map((v: { version_number: number }) => v.version_number).sort((a: number, b: number) => a - b);
  assert.deepEqual(numbers, numbers.map((_: number, i: number) => i + 1), 'version numbers without gaps');
  const sent = new Map(acked.versions.map((v) => [v.id, v.data]));
  for (const v of versions) {
    const access = await c.call(url, 'GET', `/v1/secrets/${secret.id}/versions/${v.id}:access`);
    assert.equal(access.status, 200, `version ${v.id}: ${access.text}`);
    if (sent.has(v.id)) assert.equal(access.body.data, sent.get(v.id));
  }
  for (const id of sent.keys()) assert.ok(versions.some((v: { id: string }) => v.id === id), `version ${id} was acknowledged`);
  // Acknowledged reads stayed read.
  const readNow = new Map((await c.all(url, '/v1/notifications')).map((n: { id: string; read_at: number | null }) => [n.id, n.read_at]));
  for (const id of acked.reads) assert.notEqual(readNow.get(id), null, `notification ${id} was marked read`);

  // Installs: the values are the last acknowledged ones (or those of the PATCH in flight at the
  // kill), and the renders resume until the newest has committed exactly those values.
  for (const [i, inst] of installs.entries()) {
    const { acked: last, pending } = acked.values[i]!;
    const got = await c.ok(url, 'GET', `/v1/installs/${inst.id}`);
    assert.ok([last, pending].includes(got.values.who), `install ${i}: values ${got.values.who}, acknowledged ${last}, in flight ${pending}`);
    const renders = await waitFor(
      `the renders of install ${i} to finish`,
      async () => {
        const all = await c.all(url, `/v1/installs/${inst.id}/renders`);
        return all.every((r: { state: string }) => r.state === 'succeeded' || r.state === 'superseded') ? all : null;
      },
      90_000,
    );
    assert.equal(renders[0].state, 'succeeded', 'the newest render succeeded');
    const op = await c.ok(url, 'GET', `/v1/operations/${renders[0].operation_id}`);
    assert.equal(op.done, true);
    const now = await c.ok(url, 'GET', `/v1/installs/${inst.id}`);
    assert.deepEqual(now.current_version, { id: version.id, semver: '1.0.0' });
    const repo = repositories(tdb.dataDir).find((r) => r.endsWith(`${inst.id}.git`));
    assert.ok(repo, `the repository of ${inst.id}`);
    checkRepository(repo, renders);
    assert.equal(git(repo, 'show', `${renders[0].commit_sha}:hello.txt`), `Hello ${now.values.who}`, 'the newest commit holds the current values');
  }
  assert.equal(repositories(tdb.dataDir).length, INSTALLS, 'no half-made repository is left beside them');
  const jobs = await tdb.database.db.selectFrom('jobs').select(['kind', 'state', 'last_error']).where('kind', 'like', 'render.%').execute();
  assert.deepEqual(jobs.filter((j) => j.state !== 'succeeded'), [], 'every render job finished');
  // Not one credential or payload of the storm in any line the servers wrote.
  const needles = [boot.session_token!, boot.api_token!, ...acked.tokens.map((t) => t.token), ...acked.versions.flatMap((v) => [v.data, Buffer.from(v.data, 'base64').toString()])];
  const written = logs.flat();
  assert.ok(written.length > 20, `${written.length} log lines`);
  const hits = written.filter((line) => needles.some((n) => line.includes(n)));
  assert.deepEqual(hits, [], 'a credential or payload in the server log');
  console.log(`# ${ENGINE}: acknowledged ${acked.tokens.length} tokens, ${acked.versions.length} versions, ${acked.reads.length} reads; ${jobs.length} render jobs, ${orphaned} taken over from the dead worker`);
});
