import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useComputeTestApp, getMachine, getOperation, PLATFORM_TOKEN, runningMachine, suspend, suspensions } from './setup.js';
import { SNAPSHOT_GROSS_PER_GB } from './provider-stub.js';

const t = useComputeTestApp();

const DAY = 86_400;
const platform = () => t.stub.project(PLATFORM_TOKEN);
const snapshotsOf = (machineId: string) => [...platform().snapshots.values()].filter((i) => i.labels['wsp-machine'] === machineId.slice(4));
const resume = (id: string, credential = t.s.apiToken) => t.h.app.inject({ method: 'POST', url: `/v1/compute/suspensions/${id}:resume`, headers: as(credential) });

async function suspended(hostname?: string) {
  const m = await runningMachine(t, hostname ? { hostname } : {});
  const res = await suspend(t, m);
  assert.equal(res.statusCode, 200, res.body);
  await t.h.app.jobs.runDue();
  const after = await getMachine(t, m.id);
  const susp = (await suspensions(t)).find((s: { id: string }) => s.id === after.suspension_id);
  return { before: m, machine: after, suspension: susp };
}

describe('POST /v1/machines/{id}:suspend', () => {
  test('snapshot, then delete the server: the machine is suspended and listed with every field of the spec', async () => {
    const m = await runningMachine(t, { hostname: 'db-1' });
    const serverId = m.provider_server_id;
    const res = await suspend(t, m, { reason: 'manual' });
    assert.equal(res.statusCode, 200);
    const pending = res.json();
    assert.equal(pending.status, 'suspending');
    assert.notEqual(pending.etag, m.etag);
    assert.equal(res.headers.etag, `"${pending.etag}"`);
    assert.equal((await getOperation(t, pending.operation_id)).kind, 'machine.suspend');

    await t.h.app.jobs.runDue();
    const done = await getMachine(t, m.id);
    assert.equal(done.status, 'suspended');
    assert.equal(done.provider_server_id, null);
    assert.match(done.suspension_id, /^susp_[0-9a-z]{26}$/);
    assert.equal(platform().servers.has(serverId), false, 'the server is deleted');
    const [snapshot] = snapshotsOf(m.id);
    assert.equal(snapshot?.status, 'available');
    assert.equal(snapshot?.created_from, serverId);
    const calls = t.stub.requests.map((r) => `${r.method} ${r.path}`);
    assert.ok(calls.lastIndexOf(`POST /servers/${serverId}/actions/create_image`) < calls.lastIndexOf(`DELETE /servers/${serverId}`), 'snapshot first');

    const list = await t.h.app.inject({ method: 'GET', url: '/v1/compute/suspensions', headers: as(t.s.member.session, t.s.workspaceId) });
    assert.equal(list.statusCode, 200);
    const s = list.json<{ id: string }[]>().find((x) => x.id === done.suspension_id) as Record<string, unknown>;
    const now = Math.floor(t.h.clock.nowMs() / 1000);
    assert.deepEqual(s, {
      id: done.suspension_id,
      workspace_id: t.s.workspaceId,
      cluster_id: m.cluster_id,
      server_type: 'cx22',
      location: 'fsn1',
      hostname: 'db-1',
      provider_suspend_data: { provider: 'hetzner', snapshot_id: snapshot.id, size_gb: t.stub.snapshotSizeGb },
      monthly_cost_cents: Math.round(t.stub.snapshotSizeGb * SNAPSHOT_GROSS_PER_GB * 100 * 100) / 100,
      expires_at: now + 30 * DAY,
      created_at: now,
      reason: 'manual',
    });
    assert.equal(s.monthly_cost_cents, 3.36);
    const op = await getOperation(t, pending.operation_id);
    assert.deepEqual(op.result, { machine_id: m.id, suspension_id: done.suspension_id, snapshot_id: snapshot.id });
  });

  test("GET /v1/compute/suspensions is a bare array of the workspace's own", async () => {
    const other = await t.h.seed('Elsewhere');
    const res = await t.h.app.inject({ method: 'GET', url: '/v1/compute/suspensions', headers: as(other.apiToken) });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), []);
    assert.ok(Array.isArray(await suspensions(t)));
  });

  test('If-Match is required (422), checked first (409 with current_etag); only a running machine is suspended (409, 7401)', async () => {
    const m = await runningMachine(t);
    const url = `/v1/machines/${m.id}:suspend`;
    const missing = await t.h.app.inject({ method: 'POST', url, headers: as(t.s.apiToken) });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(firstError(missing.json()).path, ['headers', 'if-match']);
    const stale = await t.h.app.inject({ method: 'POST', url, headers: as(t.s.apiToken, undefined, { 'if-match': '"nope"' }) });
    assert.equal(stale.statusCode, 409);
    assert.deepEqual(firstError(stale.json()).metadata, { current_etag: m.etag });
    const downgrade = await suspend(t, m, { reason: 'downgrade' });
    assert.equal(downgrade.statusCode, 422, 'downgrade is for the platform only');
    assert.deepEqual(firstError(downgrade.json()).path, ['body', 'reason']);
    assert.deepEqual(firstError((await suspend(t, m, { reason: 'manual', now: true })).json()).path, ['body', 'now']);

    const first = await suspend(t, m);
    assert.equal(first.statusCode, 200);
    const again = await suspend(t, first.json());
    assert.equal(again.statusCode, 409);
    assert.equal(firstError(again.json()).code, 7401);
    const staleAgain = await suspend(t, m);
    assert.equal(staleAgain.statusCode, 409);
    assert.equal(firstError(staleAgain.json()).code, 7030, 'the etag is checked before the state');
    await t.h.app.jobs.runDue();
  });

  test('of concurrent suspends with the same etag exactly one wins; of concurrent resumes, one', async () => {
    const m = await runningMachine(t);
    const results = await Promise.all([0, 1, 2, 3, 4].map(() => suspend(t, m)));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409, 409, 409, 409]);
    await t.h.app.jobs.runDue();
    const { suspension_id } = await getMachine(t, m.id);
    const resumes = await Promise.all([0, 1, 2].map(() => resume(suspension_id)));
    assert.deepEqual(resumes.map((r) => r.statusCode).sort(), [200, 409, 409]);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'running');
  });

  test("another workspace's machine is 404; an over-long id 422", async () => {
    const m = await runningMachine(t);
    const other = await t.h.seed('Thief');
    const res = await t.h.app.inject({ method: 'POST', url: `/v1/machines/${m.id}:suspend`, headers: as(other.apiToken, undefined, { 'if-match': '*' }) });
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7002);
    const long = await t.h.app.inject({ method: 'POST', url: `/v1/machines/${'x'.repeat(65)}:suspend`, headers: as(t.s.apiToken, undefined, { 'if-match': '*' }) });
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['path', 'id']);
  });
});

describe('a provider failing mid-suspend leaves no half state', () => {
  test('deleting the server refused for good: back to running on the same server, the snapshot removed, no suspension', async () => {
    const m = await runningMachine(t);
    t.stub.fail({ method: 'DELETE', path: /^\/servers\/\d+$/, status: 403, code: 'protected', message: 'server is delete-protected' });
    const op = (await suspend(t, m)).json().operation_id;
    await t.h.app.jobs.runDue();
    const after = await getMachine(t, m.id);
    assert.equal(after.status, 'running');
    assert.equal(after.provider_server_id, m.provider_server_id);
    assert.equal(after.suspension_id, null);
    assert.ok(platform().servers.has(m.provider_server_id));
    assert.deepEqual(snapshotsOf(m.id), [], 'the snapshot made on the way is deleted');
    const result = await getOperation(t, op);
    assert.equal(result.error.code, 7405);
    assert.match(result.error.message, /delete-protected/);
    assert.equal(
      (await suspensions(t)).some((s: { hostname: string }) => s.hostname === m.hostname),
      false,
    );
    assert.equal((await suspend(t, after)).statusCode, 200, 'it can be suspended again');
    await t.h.app.jobs.runDue();
  });

  test('the snapshot action ending in error: back to running (7406), the failed snapshot removed', async () => {
    const m = await runningMachine(t);
    t.stub.failAction('create_image');
    const op = (await suspend(t, m)).json().operation_id;
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'running');
    assert.equal((await getOperation(t, op)).error.code, 7406);
    assert.deepEqual(snapshotsOf(m.id), []);
    assert.ok(platform().servers.has(m.provider_server_id));
  });

  test('a transient failure after the snapshot: retried, with exactly one snapshot in the end', async () => {
    const m = await runningMachine(t);
    t.stub.fail({ method: 'DELETE', path: /^\/servers\/\d+$/, status: 503, code: 'unavailable', times: 2 });
    t.stub.fail({ method: 'GET', path: /^\/pricing$/, hang: true });
    await suspend(t, m);
    for (let i = 0; i < 4; i++) {
      await t.h.app.jobs.runDue();
      t.h.clock.advanceSeconds(20);
    }
    const after = await getMachine(t, m.id);
    assert.equal(after.status, 'suspended');
    assert.equal(snapshotsOf(m.id).length, 1);
    assert.equal(t.stub.requestsTo('POST', new RegExp(`^/servers/${m.provider_server_id}/actions/create_image$`)).length, 1, 'one snapshot made, found again by its label');
  });

  test('a slow snapshot: the job comes back later instead of failing, and still makes one snapshot', async () => {
    const m = await runningMachine(t);
    t.stub.actionPolls = 25;
    await suspend(t, m);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'suspending');
    t.stub.finishActions();
    t.stub.actionPolls = 1;
    t.h.clock.advanceSeconds(5);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'suspended');
    assert.equal(snapshotsOf(m.id).length, 1);
  });

  test('the server gone at the provider: the operation fails (7405) and the machine is not left suspending', async () => {
    const m = await runningMachine(t);
    platform().servers.delete(m.provider_server_id);
    const op = (await suspend(t, m)).json().operation_id;
    await t.h.app.jobs.runDue();
    assert.equal((await getOperation(t, op)).error.code, 7405);
    assert.equal((await getMachine(t, m.id)).status, 'failed');
  });
});

describe('POST /v1/compute/suspensions/{id}:resume', () => {
  test('recreates the server from the snapshot, deletes the snapshot and ends the suspension; no If-Match needed', async () => {
    const { machine, suspension } = await suspended('api-1');
    const res = await resume(suspension.id.slice(5));
    assert.equal(res.statusCode, 200);
    const pending = res.json();
    assert.equal(pending.id, machine.id);
    assert.equal(pending.status, 'resuming');
    assert.equal((await getOperation(t, pending.operation_id)).kind, 'machine.resume');
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === suspension.id),
      false,
      'no longer listed as suspended',
    );
    const twice = await resume(suspension.id);
    assert.equal(twice.statusCode, 409);
    assert.equal(firstError(twice.json()).code, 7402);

    await t.h.app.jobs.runDue();
    const running = await getMachine(t, machine.id);
    assert.equal(running.status, 'running');
    assert.equal(running.suspension_id, null);
    const server = platform().servers.get(running.provider_server_id)!;
    assert.equal(server.image, suspension.provider_suspend_data.snapshot_id);
    assert.equal(server.server_type, 'cx22');
    assert.equal(server.location, 'fsn1');
    assert.equal(platform().snapshots.has(suspension.provider_suspend_data.snapshot_id), false);
    const over = await resume(suspension.id);
    assert.equal(over.statusCode, 404);
    assert.equal(firstError(over.json()).code, 7002);
  });

  test("unknown or another workspace's suspension: 404; an over-long id: 422", async () => {
    const { suspension } = await suspended();
    const other = await t.h.seed('Nosy');
    assert.equal((await resume(suspension.id, other.apiToken)).statusCode, 404);
    assert.equal((await resume('susp_01jabcdefghjkmnpqrstvwxyz0')).statusCode, 404);
    const long = await resume('x'.repeat(65));
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['path', 'id']);
  });

  test('the provider refusing the new server: the machine stays suspended, the suspension listed, the snapshot kept', async () => {
    const { machine, suspension } = await suspended();
    t.stub.fail({ method: 'POST', path: /^\/servers$/, status: 422, code: 'invalid_input', message: 'bad server type' });
    const op = (await resume(suspension.id)).json().operation_id;
    await t.h.app.jobs.runDue();
    assert.equal((await getOperation(t, op)).error.code, 7405);
    assert.equal((await getMachine(t, machine.id)).status, 'suspended');
    assert.ok((await suspensions(t)).some((s: { id: string }) => s.id === suspension.id));
    assert.ok(platform().snapshots.has(suspension.provider_suspend_data.snapshot_id));
    assert.equal((await resume(suspension.id)).statusCode, 200, 'it can be resumed again');
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, machine.id)).status, 'running');
  });

  test('the create action failing on resume: the new server is removed and the suspension stays', async () => {
    const { machine, suspension } = await suspended();
    t.stub.failAction('create_server');
    await resume(suspension.id);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, machine.id)).status, 'suspended');
    assert.deepEqual(
      [...platform().servers.values()].filter((s) => s.labels['wsp-machine'] === machine.id.slice(4)),
      [],
    );
    assert.ok((await suspensions(t)).some((s: { id: string }) => s.id === suspension.id));
  });
});

describe('provider faults during resume and suspend are retried, and a rate limit is honoured', () => {
  const settle = async (times: number, seconds: number) => {
    for (let i = 0; i < times; i++) {
      t.h.clock.advanceSeconds(seconds);
      await t.h.app.jobs.runDue();
    }
  };

  test('resume: the provider answering 5xx is retried, then the machine runs', async () => {
    const { machine, suspension } = await suspended();
    t.stub.fail({ method: 'POST', path: /^\/servers$/, status: 503, code: 'unavailable', times: 2 });
    const op = (await resume(suspension.id)).json().operation_id;
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, machine.id)).status, 'resuming');
    assert.equal((await getOperation(t, op)).done, false);
    await settle(3, 10);
    assert.equal((await getMachine(t, machine.id)).status, 'running');
    assert.equal(t.stub.requestsTo('POST', /^\/servers$/).filter((r) => r.body?.image === suspension.provider_suspend_data.snapshot_id).length, 3);
    assert.equal(platform().snapshots.has(suspension.provider_suspend_data.snapshot_id), false);
    assert.deepEqual((await getOperation(t, op)).error, null);
  });

  test('resume: a provider that does not answer in time is retried, then the machine runs', async () => {
    const { machine, suspension } = await suspended();
    t.stub.fail({ method: 'GET', path: new RegExp(`^/images/${suspension.provider_suspend_data.snapshot_id}$`), hang: true });
    await resume(suspension.id);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, machine.id)).status, 'resuming');
    await settle(2, 10);
    const running = await getMachine(t, machine.id);
    assert.equal(running.status, 'running');
    assert.equal([...platform().servers.values()].filter((s) => s.labels['wsp-machine'] === machine.id.slice(4)).length, 1, 'one server');
  });

  test('resume: a 429 with Retry-After: nothing is sent to the provider before it has passed', async () => {
    const { machine, suspension } = await suspended();
    t.stub.fail({ method: 'POST', path: /^\/servers$/, status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '120' } });
    await resume(suspension.id);
    await t.h.app.jobs.runDue();
    const sent = t.stub.requests.length;
    await settle(3, 30);
    assert.equal(t.stub.requests.length, sent, 'the retries waited for the provider');
    assert.equal((await getMachine(t, machine.id)).status, 'resuming');
    await settle(2, 400);
    assert.equal((await getMachine(t, machine.id)).status, 'running');
  });

  test('suspend: a 429 with Retry-After on the snapshot: nothing is sent before it has passed, then one snapshot and suspended', async () => {
    const m = await runningMachine(t);
    t.stub.fail({ method: 'POST', path: /^\/servers\/\d+\/actions\/create_image$/, status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '90' } });
    await suspend(t, m);
    await t.h.app.jobs.runDue();
    const sent = t.stub.requests.length;
    await settle(2, 30);
    assert.equal(t.stub.requests.length, sent, 'the retries waited for the provider');
    assert.equal((await getMachine(t, m.id)).status, 'suspending');
    await settle(2, 400);
    const done = await getMachine(t, m.id);
    assert.equal(done.status, 'suspended');
    assert.equal(snapshotsOf(m.id).length, 1);
    assert.ok((await suspensions(t)).some((s: { id: string }) => s.id === done.suspension_id));
  });
});
