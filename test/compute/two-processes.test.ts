import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { ProviderStub } from './provider-stub.js';

/**
 * The compute area on real `wsp serve` processes against the stub of the provider: two of
 * them on one PostgreSQL (one on SQLite, which is one process by design), each with its job
 * worker and expiry scheduler (every second). Time for suspensions moves through
 * WSP_COMPUTE_CLOCK_OFFSET_FILE (src/compute/clock.ts), which every process reads: the test
 * moves it days ahead instead of waiting. Retention is 10 days, so the first scans see more than
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

/** Moves the compute clock of every process so that it reads `target` (Unix seconds) now. */
function setComputeNow(target: number) {
  const tmp = `${offsetFile}.tmp`;
  fs.writeFileSync(tmp, String(target - Math.floor(Date.now() / 1000)));
  fs.renameSync(tmp, offsetFile);
}

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
    WSP_COMPUTE_CLOCK_OFFSET_FILE: offsetFile,
  };
  servers.push(...(await Promise.all(Array.from({ length: COUNT }, () => startServer(env)))));
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

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 45_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(150);
  }
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
    assert.equal(list.some((s) => s.id === susp.id), false, 'no longer listed');
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
  await sleep(2500);
  assert.deepEqual(await notices(people.owner, machine.id), [], 'more than 7 days left: nothing yet');

  setComputeNow(susp.expires_at - 7 * DAY + 60);
  for (const who of ['owner', 'admin'] as const) await waitFor(`the ${who}'s info`, async () => (await notices(people[who], machine.id)).length > 0);
  await sleep(3000); // more scans, by every process
  for (const who of ['owner', 'admin'] as const) {
    const got = await notices(people[who], machine.id);
    assert.deepEqual(got.map((n) => n.severity), ['info'], `${who}: ${JSON.stringify(got)}`);
    assert.match(got[0]!.title, /expiring-1 is deleted in 7 days/);
  }

  setComputeNow(susp.expires_at - DAY + 60);
  for (const who of ['owner', 'admin'] as const) await waitFor(`the ${who}'s warning`, async () => (await notices(people[who], machine.id)).length > 1);
  await sleep(3000);
  for (const who of ['owner', 'admin'] as const) {
    const got = await notices(people[who], machine.id);
    assert.deepEqual(got.map((n) => n.severity), ['warning', 'info'], `${who}: ${JSON.stringify(got)}`);
    assert.match(got[0]!.title, /is deleted in 1 day$/);
  }
  assert.equal(platform().snapshots.has(snapshotId), true, 'kept until the expiry');

  // At the expiry the provider fails the deletion twice: a worker retries it.
  stub.fail({ method: 'DELETE', path: new RegExp(`^/images/${snapshotId}$`), status: 503, code: 'unavailable', times: 2 });
  setComputeNow(susp.expires_at + 5);
  await waitFor('the snapshot to be deleted at the provider', async () => !platform().snapshots.has(snapshotId));
  assert.equal(stub.requestsTo('DELETE', new RegExp(`^/images/${snapshotId}$`)).length, 3, 'two refused, one deleted');
  for (let i = 0; i < COUNT; i++) {
    const list = (await ok(i, 'GET', '/v1/compute/suspensions')) as { id: string }[];
    assert.equal(list.some((s) => s.id === susp.id), false, `no longer listed by process ${i}`);
    const m = await ok(i, 'GET', `/v1/machines/${machine.id}`);
    assert.equal(m.status, 'expired');
    assert.equal(m.suspension_id, null);
  }
  assert.equal((await call(1, 'POST', `/v1/compute/suspensions/${susp.id}:resume`)).status, 404);

  await sleep(2500);
  for (const who of ['owner', 'admin'] as const) {
    assert.deepEqual((await notices(people[who], machine.id)).map((n) => n.severity), ['warning', 'info'], `${who}: exactly one of each`);
  }
  assert.deepEqual(await notices(people.member, machine.id), [], 'members get none');
  const row = await tdb.database.db.selectFrom('machines').select(['snapshot_id']).where('id', '=', machine.id).executeTakeFirstOrThrow();
  assert.equal(row.snapshot_id, null, 'the deletion is confirmed in the database');
  const scans = await tdb.database.db.selectFrom('jobs').select(['dedupe_key']).where('kind', '=', 'compute.expiry_scan').execute();
  assert.ok(scans.length >= 8, `${scans.length} scans ran`);
  assert.equal(new Set(scans.map((s) => s.dedupe_key)).size, scans.length, 'one scan per period across the processes');
  setComputeNow(Math.floor(Date.now() / 1000));
});
