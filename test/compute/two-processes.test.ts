import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait.js';
import { jobsSucceededSince } from '../helpers/jobs.js';
import { api, serveWithMovedComputeClock, startServer, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { ProviderStub } from './provider-stub.js';

/**
 * The compute area on real `wsp serve` processes against the stub of the provider: two of
 * them on one PostgreSQL (one on SQLite, which is one process by design), each with its job
 * worker and expiry scheduler (every second). Time for suspensions moves through a file of
 * seconds every process's compute clock reads (test/helpers/offset-clock.ts, given to each
 * server by test/helpers/serve-moved-clock.ts): the test moves it days ahead instead of waiting. Retention is 10 days, so the first scans see more than
 * 7 days left (no notice), and moving the clock shows the info, the warning, then the expiry.
 */
const COUNT = ENGINE === 'postgres' ? 2 : 1;
const PLATFORM_TOKEN = 'platform-token-of-two-processes';
const DAY = 86_400;

let tdb: TestDatabase;
let stub: ProviderStub;
let clockDir: string;
let offsetFile: string;
const servers: ServerProcess[] = [];
let ws: string;
let people: { owner: string; admin: string; member: string };

/** How stale a process's compute clock may be after the offset file moved (REREAD_MS of test/helpers/offset-clock.ts). */
const OFFSET_REREAD_MS = 100;

/**
 * Moves the compute clock of every process so that it reads `target` (Unix seconds) now.
 * Returns the moment (Unix ms) from which every process reads the new time.
 */
function setComputeNow(target: number): number {
  const tmp = `${offsetFile}.tmp`;
  fs.writeFileSync(tmp, String(target - Math.floor(Date.now() / 1000)));
  fs.renameSync(tmp, offsetFile);
  return Date.now() + OFFSET_REREAD_MS;
}

/** Every process scans each second, but one scan runs per second across them (a job per period). */
const SCANS = 'compute.expiry_scan';

/**
 * Waits until `k` expiry scans scheduled after `sinceMs` (Unix ms) have succeeded, whichever
 * process ran them: instead of sleeping through some and hoping they ran. A scan's job row is
 * made (created_at, by the clock of this machine, which every process shares) before any
 * process claims it, and the scan reads the compute clock after that; so a check made after
 * this shows what those scans did, and fails if none ran. The test asks for 2 each time: its
 * four waits, one after another, alone make the 8 scans its last assertion counts.
 */
const scansAfter = (sinceMs: number, k: number, what: string) => jobsSucceededSince(tdb.database, SCANS, sinceMs, k, what);

before(async () => {
  stub = new ProviderStub([PLATFORM_TOKEN]);
  stub.actionPolls = 0;
  await stub.start();
  tdb = await openTestDatabase();
  const admin = createAdminService(tdb.database.db, systemClock);
  const boot = await admin.bootstrap();
  ws = boot.workspace_id;
  const adm = (await admin.createUser({ name: 'admin' })).user_id;
  const mem = (await admin.createUser({ name: 'member' })).user_id;
  await admin.addMember(ws, adm, 'admin');
  await admin.addMember(ws, mem, 'member');
  people = {
    owner: boot.session_token,
    admin: (await admin.createSession(adm)).session_token,
    member: (await admin.createSession(mem)).session_token,
  };
  clockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-clock-'));
  offsetFile = path.join(clockDir, 'offset');
  fs.writeFileSync(offsetFile, '0');
  const env = {
    ...tdb.env,
    WSP_MASTER_KEY: randomBytes(32).toString('base64'),
    WSP_PROVIDER_URL: stub.url,
    WSP_PROVIDER_TOKEN: PLATFORM_TOKEN,
    WSP_SCHEDULER_INTERVAL_SECONDS: '1',
    WSP_SUSPENSION_RETENTION_DAYS: '10',
  };
  servers.push(...(await Promise.all(Array.from({ length: COUNT }, () => startServer(env, [], serveWithMovedComputeClock(offsetFile))))));
});

after(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await tdb?.cleanup();
  await stub?.stop();
  if (clockDir) fs.rmSync(clockDir, { recursive: true, force: true });
});

/** The i-th request's process, round robin. */
const at = (i: number) => servers[i % servers.length]!.url;

async function call(i: number, method: string, url: string, opts: { credential?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  return api(at(i), method, url, { credential: opts.credential ?? people.owner, workspaceId: ws, ...(opts.body === undefined ? {} : { body: opts.body }), headers: opts.headers ?? {} });
}

async function ok(i: number, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await call(i, method, url, { body, headers });
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${url} -> ${res.status} ${res.text}`);
  return res.body;
}

const platform = () => stub.project(PLATFORM_TOKEN);
const serversOf = (machineId: string) => [...platform().servers.values()].filter((s) => s.labels['wsp-machine'] === machineId.slice(4));

async function suspendedMachine(hostname: string) {
  const cc = await ok(0, 'POST', '/v1/compute/configs', { name: hostname, provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', machine_type_filter: 'cx*' });
  const created = await ok(1, 'POST', '/v1/machines', { compute_config_id: cc.id, server_type: 'cx22', hostname });
  const running = await waitFor('the machine to run', async () => {
    const m = await ok(0, 'GET', `/v1/machines/${created.id}`);
    assert.notEqual(m.status, 'failed', JSON.stringify(m));
    return m.status === 'running' ? m : null;
  });
  await ok(1, 'POST', `/v1/machines/${created.id}:suspend`, {}, { 'if-match': running.etag });
  const machine = await waitFor('the machine to be suspended', async () => {
    const m = await ok(0, 'GET', `/v1/machines/${created.id}`);
    return m.status === 'suspended' ? m : null;
  });
  const list = (await ok(1, 'GET', '/v1/compute/suspensions')) as { id: string }[];
  const susp = list.find((s) => s.id === machine.suspension_id) as any;
  assert.ok(susp, 'listed');
  return { machine, susp };
}

async function notices(session: string, machineId: string): Promise<{ severity: string; title: string }[]> {
  const res = await api(at(0), 'GET', '/v1/notifications?limit=50', { credential: session });
  assert.equal(res.status, 200, res.text);
  return (res.body.data as { type: string; resource_id: string; severity: string; title: string }[]).filter((n) => n.type === 'machine_expiry' && n.resource_id === machineId);
}

test(`${COUNT} process${COUNT > 1 ? 'es' : ''}: a resume requested on one, with the provider failing at first, runs once: one server, the snapshot deleted, the suspension over`, async () => {
  const { machine, susp } = await suspendedMachine('resume-1');
  const snapshotId = susp.provider_suspend_data.snapshot_id;
  stub.fail({ method: 'POST', path: /^\/servers$/, status: 503, code: 'unavailable', times: 2 });
  const res = await call(COUNT - 1, 'POST', `/v1/compute/suspensions/${susp.id}:resume`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'resuming');
  const running = await waitFor('the machine to run again', async () => {
    const m = await ok(0, 'GET', `/v1/machines/${machine.id}`);
    return m.status === 'running' ? m : null;
  });
  assert.equal(serversOf(machine.id).length, 1, 'one server');
  assert.equal(serversOf(machine.id)[0]!.id, running.provider_server_id);
  assert.equal(stub.requestsTo('POST', /^\/servers$/).filter((r) => r.body?.image === snapshotId).length, 3, 'two refused, one made');
  assert.equal(platform().snapshots.has(snapshotId), false, 'the snapshot is deleted');
  for (let i = 0; i < COUNT; i++) {
    const list = (await ok(i, 'GET', '/v1/compute/suspensions')) as { id: string }[];
    assert.equal(
      list.some((s) => s.id === susp.id),
      false,
      'no longer listed',
    );
  }
  const op = await ok(1, 'GET', `/v1/operations/${res.body.operation_id}`);
  assert.equal(op.done, true);
  assert.equal(op.error, null);
  assert.equal((await call(0, 'POST', `/v1/compute/suspensions/${susp.id}:resume`)).status, 404);
});

test(`${COUNT} process${COUNT > 1 ? 'es' : ''}: one info and one warning per owner and admin, none to members; at expiry the snapshot is deleted (retried across a fault) and the suspension is gone`, async () => {
  const { machine, susp } = await suspendedMachine('expiring-1');
  const snapshotId = susp.provider_suspend_data.snapshot_id;
  assert.ok(susp.expires_at - susp.created_at === 10 * DAY);
  await scansAfter(Date.now(), 2, 'the suspension was made');
  assert.deepEqual(await notices(people.owner, machine.id), [], 'more than 7 days left: nothing yet');

  const infoTime = setComputeNow(susp.expires_at - 7 * DAY + 60);
  for (const who of ['owner', 'admin'] as const) await waitFor(`the ${who}'s info`, async () => (await notices(people[who], machine.id)).length > 0);
  await scansAfter(Math.max(Date.now(), infoTime), 2, 'the info was sent'); // more scans, by any process
  for (const who of ['owner', 'admin'] as const) {
    const got = await notices(people[who], machine.id);
    assert.deepEqual(
      got.map((n) => n.severity),
      ['info'],
      `${who}: ${JSON.stringify(got)}`,
    );
    assert.match(got[0]!.title, /expiring-1 is deleted in 7 days/);
  }

  const warningTime = setComputeNow(susp.expires_at - DAY + 60);
  for (const who of ['owner', 'admin'] as const) await waitFor(`the ${who}'s warning`, async () => (await notices(people[who], machine.id)).length > 1);
  await scansAfter(Math.max(Date.now(), warningTime), 2, 'the warning was sent');
  for (const who of ['owner', 'admin'] as const) {
    const got = await notices(people[who], machine.id);
    assert.deepEqual(
      got.map((n) => n.severity),
      ['warning', 'info'],
      `${who}: ${JSON.stringify(got)}`,
    );
    assert.match(got[0]!.title, /is deleted in 1 day$/);
  }
  assert.equal(platform().snapshots.has(snapshotId), true, 'kept until the expiry');

  // At the expiry the provider fails the deletion twice: a worker retries it.
  stub.fail({ method: 'DELETE', path: new RegExp(`^/images/${snapshotId}$`), status: 503, code: 'unavailable', times: 2 });
  const expiryTime = setComputeNow(susp.expires_at + 5);
  await waitFor('the snapshot to be deleted at the provider', async () => !platform().snapshots.has(snapshotId));
  assert.equal(stub.requestsTo('DELETE', new RegExp(`^/images/${snapshotId}$`)).length, 3, 'two refused, one deleted');
  for (let i = 0; i < COUNT; i++) {
    const list = (await ok(i, 'GET', '/v1/compute/suspensions')) as { id: string }[];
    assert.equal(
      list.some((s) => s.id === susp.id),
      false,
      `no longer listed by process ${i}`,
    );
    const m = await ok(i, 'GET', `/v1/machines/${machine.id}`);
    assert.equal(m.status, 'expired');
    assert.equal(m.suspension_id, null);
  }
  assert.equal((await call(1, 'POST', `/v1/compute/suspensions/${susp.id}:resume`)).status, 404);

  await scansAfter(Math.max(Date.now(), expiryTime), 2, 'the expiry');
  for (const who of ['owner', 'admin'] as const) {
    assert.deepEqual(
      (await notices(people[who], machine.id)).map((n) => n.severity),
      ['warning', 'info'],
      `${who}: exactly one of each`,
    );
  }
  assert.deepEqual(await notices(people.member, machine.id), [], 'members get none');
  const row = await tdb.database.db.selectFrom('machines').select(['snapshot_id']).where('id', '=', machine.id).executeTakeFirstOrThrow();
  assert.equal(row.snapshot_id, null, 'the deletion is confirmed in the database');
  const scans = await tdb.database.db.selectFrom('jobs').select(['dedupe_key']).where('kind', '=', SCANS).execute();
  assert.ok(scans.length >= 8, `${scans.length} scans ran`);
  assert.equal(new Set(scans.map((s) => s.dedupe_key)).size, scans.length, 'one scan per period across the processes');
  setComputeNow(Math.floor(Date.now() / 1000));
});
