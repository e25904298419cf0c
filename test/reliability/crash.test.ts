import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { createAdminService } from '../../src/admin/service.js';
import { notify } from '../../src/notifications/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, client, git, isNetworkError, masterKey, repositories } from './servers.js';
import { waitFor } from '../helpers/wait.js';
import type { Schemas } from '../helpers/test-app.js';

/**
 * Issue 9.4: `kill -9` of `wsp serve` in the middle of a storm of writes, on the engine of the
 * run: API tokens, secret versions, notification reads, install PATCHes (which queue renders),
 * install creations and restores (both write git in the request). Each lane counts a write only
 * once its 2xx arrived; an answer it does not expect fails the test (only a failed connection,
 * the kill, ends a lane). After a restart on the same database and data directory:
 * - every acknowledged write is there and whole (tokens authenticate, versions decrypt to what
 *   was sent, reads stay read, creations and restores exist and finish);
 * - nothing half-written is visible (every listed version decrypts, every install has its
 *   repository and every repository its install, no render is stuck);
 * - the jobs the killed worker held are taken over for real once their lease runs out (the
 *   servers run with WSP_JOB_LEASE_SECONDS=3) and every render finishes;
 * - every repository passes `git fsck --strict` and checkRepository's rule (servers.ts).
 * WSP_CRASH_CYCLES (default 1) storms and kills that many times before checking.
 */
const CYCLES = Number(process.env.WSP_CRASH_CYCLES ?? 1);
const INSTALLS = 3;
const LEASE_SECONDS = 3;

let tdb: TestDatabase;
let env: Record<string, string>;
let server: ServerProcess | undefined;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };

before(async () => {
  tdb = await openTestDatabase();
  env = { ...tdb.env, WSP_MASTER_KEY: masterKey(), WSP_JOB_LEASE_SECONDS: String(LEASE_SECONDS) };
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  // For the log scan of every line the servers write (test/helpers/log-scan.ts), with the tokens,
  // sessions and payloads the storm makes, which api() registers as they are acknowledged.
  registerSecret(boot.session_token, boot.api_token);
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
  created: string[];
  restores: { renderId: string; commit: string }[];
}

type Render = Schemas['Render'];

test(`kill -9 during a write storm (${CYCLES} time${CYCLES === 1 ? '' : 's'}): every acknowledged write survives whole, jobs are taken over, repositories pass fsck`, async (t: TestContext) => {
  server = await startServer(env);
  const c = client(boot.session_token, boot.workspace_id);
  const base = () => server!.url;
  const pkg = await c.ok(base(), 'POST', '/v1/packages', { name: 'storm' });
  const version = await c.ok(base(), 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n', 'dir/b.txt': '{{who}}!' } });
  const install = (name: string, who: string) => c.ok(base(), 'POST', '/v1/installs', { name, package_id: pkg.id, version_id: version.id, values: { who } });
  const installs: { id: string }[] = [];
  for (let i = 0; i < INSTALLS; i++) installs.push(await install(`storm-${i}`, 'initial'));
  // The install the restores go to: its first render (values 'first') is restored over and over.
  const restored = await install('storm-restore', 'first');
  const first = await waitFor('the first render of the restored install', async () => {
    const [r] = await c.all(base(), `/v1/installs/${restored.id}/renders`);
    return r?.state === 'succeeded' ? (r as Render) : null;
  });
  const secret = await c.ok(base(), 'POST', '/v1/secrets', { name: 'storm' });
  for (let i = 0; i < 60; i++) {
    await notify(tdb.database.db, systemClock, {
      userIds: [boot.user_id],
      type: 'machine_expiry',
      resource_type: 'machine',
      resource_id: `mch_${i}`,
      title: 't',
      body: 'b',
      severity: 'info',
      context: {},
    });
  }
  const notices = (await c.all(base(), '/v1/notifications')).map((n: { id: string }) => n.id);
  assert.ok(notices.length >= 60);

  const acked: Acked = { tokens: [], versions: [], reads: [], values: installs.map(() => ({ acked: null, pending: null })), created: [], restores: [] };
  /** Answers no lane expects: each fails the test. */
  const unexpected: string[] = [];
  const orphaned: { id: string; kind: string; attempts: number }[] = [];
  let counter = 0;
  let noticeIndex = 0;
  const totals = { tokens: 0, versions: 0, reads: 0, patches: 0, created: 0, restores: 0, refusedRestores: 0 };

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    if (cycle > 0) server = await startServer(env);
    let alive = true;
    const counts = { tokens: 0, versions: 0, reads: 0, patches: 0, created: 0, restores: 0 };
    /** Runs one kind of write until the server is gone; a write counts only once its 2xx arrived. */
    const lane = async (name: string, step: () => Promise<void>) => {
      while (alive) {
        try {
          await step();
        } catch (err) {
          if (isNetworkError(err)) return; // the connection died with the server
          unexpected.push(`${name}: ${(err as Error).message}`);
          return;
        }
      }
    };
    /** A status the lane does not expect: recorded (the test fails), and the lane ends. */
    const fail = (name: string, res: { status: number; text: string }) => {
      throw new Error(`${name}: ${res.status} ${res.text.slice(0, 300)}`);
    };
    const url = base();
    const lanes = [
      lane('token', async () => {
        const res = await c.call(url, 'POST', '/v1/api_tokens', { name: `storm-${++counter}` });
        if (res.status !== 201) fail('token', res);
        acked.tokens.push({ id: res.body.id, token: res.body.token });
        counts.tokens++;
      }),
      lane('version', async () => {
        const data = Buffer.from(`payload ${++counter} ${'x'.repeat(counter % 300)}`).toString('base64');
        const res = await c.call(url, 'POST', `/v1/secrets/${secret.id}/versions`, { data, comment: `v${counter}` });
        if (res.status !== 201) fail('version', res);
        acked.versions.push({ id: res.body.id, data });
        counts.versions++;
      }),
      lane('read', async () => {
        const id = notices[noticeIndex++ % notices.length]!;
        const res = await c.call(url, 'PATCH', `/v1/notifications/${id}/read`);
        if (res.status !== 204) fail('read', res);
        acked.reads.push(id);
        counts.reads++;
      }),
      ...installs.map((inst, i) =>
        lane(`patch ${i}`, async () => {
          const who = `w${++counter}`;
          acked.values[i]!.pending = who;
          const res = await c.call(url, 'PATCH', `/v1/installs/${inst.id}`, { values: { who } }, { 'if-match': '*' });
          if (res.status !== 200) fail('patch', res);
          acked.values[i] = { acked: who, pending: null };
          counts.patches++;
        }),
      ),
      lane('create', async () => {
        const res = await c.call(url, 'POST', '/v1/installs', { name: `new-${++counter}`, package_id: pkg.id, version_id: version.id, values: { who: `n${counter}` } });
        if (res.status !== 201) fail('create', res);
        acked.created.push(res.body.id);
        counts.created++;
      }),
      lane('restore', async () => {
        const now = await c.call(url, 'GET', `/v1/installs/${restored.id}`);
        if (now.status !== 200) fail('restore (read)', now);
        const res = await c.call(url, 'POST', `/v1/installs/${restored.id}:restore`, { render_id: first.id }, { 'if-match': now.body.etag, 'idempotency-key': randomUUID() });
        // The restore's own job moves the etag when it succeeds: a stale one is refused and retried.
        if (res.status === 409 && res.body.errors?.[0]?.code === 7030) return void totals.refusedRestores++;
        if (res.status !== 200) fail('restore', res);
        acked.restores.push({ renderId: res.body.render.id, commit: res.body.render.commit_sha });
        counts.restores++;
      }),
    ];
    // Storm until every kind of write has been acknowledged a few times, then a little more.
    await waitFor(
      'the storm to get going',
      async () => unexpected.length > 0 || (counts.tokens >= 3 && counts.versions >= 3 && counts.reads >= 3 && counts.patches >= 3 * INSTALLS && counts.created >= 2 && counts.restores >= 2),
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    assert.deepEqual(unexpected, [], 'answers the storm did not expect');
    await sleep(200 + Math.random() * 600);
    server.child.kill('SIGKILL');
    await server.exited;
    alive = false;
    await Promise.all(lanes);
    assert.deepEqual(unexpected, [], 'answers the storm did not expect');
    for (const [k, n] of Object.entries(counts)) totals[k as keyof typeof counts] += n;
    // What the dead worker held: taken over by the next process once the lease has run out.
    orphaned.push(...(await tdb.database.db.selectFrom('jobs').select(['id', 'kind', 'attempts']).where('state', '=', 'running').execute()));
  }

  server = await startServer(env);
  const url = server.url;

  // Acknowledged tokens are there and authenticate.
  const listed = new Set((await c.all(url, '/v1/api_tokens')).map((x: { id: string }) => x.id));
  for (const x of acked.tokens) {
    assert.ok(listed.has(x.id), `token ${x.id} was acknowledged`);
    assert.equal((await client(x.token).call(url, 'GET', '/v1/me')).status, 200, `token ${x.id} works`);
  }
  // Acknowledged versions hold what was sent; no listed version is half-written.
  const versions = await c.all(url, `/v1/secrets/${secret.id}/versions`);
  const numbers = versions.map((v: { version_number: number }) => v.version_number).sort((a: number, b: number) => a - b);
  assert.deepEqual(
    numbers,
    numbers.map((_: number, i: number) => i + 1),
    'version numbers without gaps',
  );
  const sent = new Map(acked.versions.map((v) => [v.id, v.data]));
  for (const v of versions) {
    const access = await c.call(url, 'GET', `/v1/secrets/${secret.id}/versions/${v.id}:access`);
    assert.equal(access.status, 200, `version ${v.id}: ${access.text}`);
    if (sent.has(v.id)) assert.equal(access.body.data, sent.get(v.id));
  }
  const lostVersions = [...sent.keys()].filter((id) => !versions.some((v: { id: string }) => v.id === id));
  assert.deepEqual(lostVersions, [], 'acknowledged versions');
  // Acknowledged reads stayed read.
  const readNow = new Map((await c.all(url, '/v1/notifications')).map((n: { id: string; read_at: number | null }) => [n.id, n.read_at]));
  const lostReads = acked.reads.filter((id) => readNow.get(id) === null || readNow.get(id) === undefined);
  assert.deepEqual(lostReads, [], 'acknowledged reads');

  /** Waits until every render of an install is done; returns them, newest first. */
  const settled = (id: string) =>
    waitFor(
      `the renders of install ${id} to finish`,
      async () => {
        const all = (await c.all(url, `/v1/installs/${id}/renders`)) as Render[];
        return all.length > 0 && all.every((r) => r.state === 'succeeded' || r.state === 'superseded' || r.state === 'failed') ? all : null;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
  const repoOf = (id: string) => path.join(tdb.dataDir, 'repos', `${id}.git`);

  // Installs PATCHed in the storm: the values are the last acknowledged ones (or those of the PATCH
  // in flight at the kill), and the renders resume until the newest has committed exactly those.
  let commits = 0;
  for (const [i, inst] of installs.entries()) {
    const { acked: last, pending } = acked.values[i]!;
    const got = await c.ok(url, 'GET', `/v1/installs/${inst.id}`);
    assert.ok([last, pending].includes(got.values.who), `install ${i}: values ${got.values.who}, acknowledged ${last}, in flight ${pending}`);
    const renders = await settled(inst.id);
    assert.deepEqual(
      renders.filter((r) => r.state === 'failed'),
      [],
      `install ${i}: no render failed`,
    );
    assert.equal(renders[0]!.state, 'succeeded', 'the newest render succeeded');
    // The render's state commits with its work, its operation's completion just after (the job
    // runner records it): a reader can be between the two.
    await waitFor(`the operation of render ${renders[0]!.id} to be done`, async () => (await c.ok(url, 'GET', `/v1/operations/${renders[0]!.operation_id}`)).done === true || null, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    const now = await c.ok(url, 'GET', `/v1/installs/${inst.id}`);
    assert.deepEqual(now.current_version, { id: version.id, semver: '1.0.0' });
    commits += checkRepository(repoOf(inst.id), renders);
    assert.equal(git(repoOf(inst.id), 'show', `${renders[0]!.commit_sha}:hello.txt`), `Hello ${now.values.who}`, 'the newest commit holds the current values');
  }

  // Installs created in the storm: every acknowledged one is there; every one that is there
  // (acknowledged or not) is whole: its repository, its renders done, its commit on main.
  const all = (await c.all(url, '/v1/installs')) as { id: string; name: string }[];
  const listedInstalls = new Set(all.map((x) => x.id));
  const lostCreations = acked.created.filter((id) => !listedInstalls.has(id));
  assert.deepEqual(lostCreations, [], 'acknowledged install creations');
  const unacknowledged = all.filter((x) => x.name.startsWith('new-') && !acked.created.includes(x.id)).length;
  for (const x of all.filter((y) => y.name.startsWith('new-'))) {
    const renders = await settled(x.id);
    assert.equal(renders[0]!.state, 'succeeded', `install ${x.name}: its render succeeded`);
    commits += checkRepository(repoOf(x.id), renders);
  }

  // Restores: every acknowledged one is a render whose commit is on main, and it finished.
  const restoreRenders = await settled(restored.id);
  const byId = new Map(restoreRenders.map((r) => [r.id, r]));
  const lostRestores = acked.restores.filter((r) => byId.get(r.renderId)?.commit_sha !== r.commit);
  assert.deepEqual(lostRestores, [], 'acknowledged restores');
  for (const r of acked.restores) assert.equal(byId.get(r.renderId)!.state, 'succeeded', `restore ${r.renderId} finished`);
  commits += checkRepository(repoOf(restored.id), restoreRenders);
  assert.deepEqual((await c.ok(url, 'GET', `/v1/installs/${restored.id}`)).values, { who: 'first' });

  // Every repository belongs to an install, and every install has its repository.
  const repos = repositories(tdb.dataDir).map((r) => path.basename(r, '.git'));
  assert.deepEqual(
    repos.filter((id) => !listedInstalls.has(id)),
    [],
    'repositories without an install',
  );
  assert.deepEqual(
    [...listedInstalls].filter((id) => !repos.includes(id)),
    [],
    'installs without a repository',
  );
  const leftovers = fs.existsSync(path.join(tdb.dataDir, 'repos')) ? fs.readdirSync(path.join(tdb.dataDir, 'repos')).filter((n) => n.startsWith('.tmp-')).length : 0;

  // Every job of the dead workers was taken over and finished; every render job succeeded. A render
  // can settle without its job (a newer render supersedes one still queued): a job the dead worker
  // held is taken over only once its lease runs out, which may be after the renders settled.
  const renderJobs = () => tdb.database.db.selectFrom('jobs').select(['id', 'kind', 'state', 'attempts', 'last_error']).where('kind', 'like', 'render.%').execute();
  const jobs = await waitFor(
    'every render job to end',
    async () => {
      const all = await renderJobs();
      return all.every((j) => j.state !== 'queued' && j.state !== 'running') ? all : null;
    },
    { timeoutMs: 90_000, intervalMs: 200, detail: async () => JSON.stringify((await renderJobs()).filter((j) => j.state !== 'succeeded')) },
  );
  assert.deepEqual(
    jobs.filter((j) => j.state !== 'succeeded'),
    [],
    'every render job finished',
  );
  const takenOver = orphaned.filter((o) => {
    const j = jobs.find((x) => x.id === o.id);
    return j?.state === 'succeeded' && j.attempts > o.attempts;
  });
  assert.equal(takenOver.length, orphaned.filter((o) => o.kind.startsWith('render.')).length, `every render job the dead workers held was taken over: ${JSON.stringify(orphaned)}`);

  // Events (docs/spec-gaps.md, "Events and the audit log") committed with their changes: every token, version, install and
  // restore render there is has its one event, and no event names one that is not there.
  const db = tdb.database.db;
  const eventsOf = async (type: string) => (await db.selectFrom('events').select('resource_id').where('type', '=', type).execute()).map((e) => e.resource_id);
  const sameSet = async (type: string, ids: string[]) => {
    const recorded = await eventsOf(type);
    assert.equal(new Set(recorded).size, recorded.length, `${type}: one event per change`);
    assert.deepEqual([...recorded].sort(), [...ids].sort(), `${type}: events and the changes that committed`);
  };
  await sameSet(
    'api_token.created',
    (await db.selectFrom('api_tokens').select('id').where('name', 'like', 'storm-%').execute()).map((r) => r.id),
  );
  await sameSet(
    'secret_version.created',
    (await db.selectFrom('secret_versions').select('id').where('secret_id', '=', secret.id).execute()).map((r) => r.id),
  );
  await sameSet(
    'install.created',
    (await db.selectFrom('installs').select('id').execute()).map((r) => r.id),
  );
  const restoreEvents = (await db.selectFrom('events').select('data').where('type', '=', 'install.restored').execute()).map((e) => (JSON.parse(e.data) as { render_id: string }).render_id);
  assert.deepEqual(
    restoreEvents.sort(),
    restoreRenders
      .filter((r) => r.restored_from_render_id !== null)
      .map((r) => r.id)
      .sort(),
    'install.restored: one per restore render',
  );
  for (const r of acked.restores) assert.ok(restoreEvents.includes(r.renderId), `restore ${r.renderId} acknowledged has its event`);

  t.diagnostic(`crash ${ENGINE}: ${CYCLES} kill -9 cycle(s), lease ${LEASE_SECONDS} s`);
  t.diagnostic(
    `crash ${ENGINE} acknowledged/lost: tokens ${acked.tokens.length}/0, secret versions ${acked.versions.length}/${lostVersions.length}, notification reads ${acked.reads.length}/${lostReads.length}, install PATCHes ${totals.patches}/0, install creations ${acked.created.length}/${lostCreations.length} (+${unacknowledged} made but not acknowledged, whole), restores ${acked.restores.length}/${lostRestores.length} (${totals.refusedRestores} refused 409 7030 and retried)`,
  );
  t.diagnostic(
    `crash ${ENGINE} jobs: ${orphaned.length} held by killed workers (${orphaned.map((o) => o.kind).join(', ') || 'none'}), ${takenOver.length} taken over after the lease and succeeded; ${jobs.length} render jobs, all succeeded`,
  );
  t.diagnostic(
    `crash ${ENGINE} git: ${repos.length} repositories, ${commits} commits on main, git fsck --strict clean, every commit names one render; ${leftovers} unfinished .tmp- directories of killed creations (no repository)`,
  );
});
