import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as } from '../helpers/harness.js';
import { useComputeTestApp, createConfig, getMachine, getOperation, PLATFORM_TOKEN, runningMachine, suspend, suspensions } from './setup.js';

/**
 * A machine job that gives up (the provider failing for all its attempts, or refusing) must
 * leave the recorded state matching the provider's, with no server or snapshot leaked or
 * lost: what it started is put right once the provider can confirm it, however long that
 * takes, and the machine stays in its transitional state (operation pending) until then.
 */
const t = useComputeTestApp();

const FOREVER = 1_000_000;
const platform = () => t.stub.project(PLATFORM_TOKEN);
const serversOf = (machineId: string) => [...platform().servers.values()].filter((s) => s.labels['wsp-machine'] === machineId.slice(4));
const snapshotsOf = (machineId: string) => [...platform().snapshots.values()].filter((i) => i.labels['wsp-machine'] === machineId.slice(4));
const resume = (id: string) => t.h.app.inject({ method: 'POST', url: `/v1/compute/suspensions/${id}:resume`, headers: as(t.s.apiToken) });

/** Runs the jobs `times` times, a backoff's worth (the 5-minute cap) apart: one attempt each. */
async function attempts(times: number) {
  for (let i = 0; i < times; i++) {
    await t.h.app.jobs.runDue();
    t.h.clock.advanceSeconds(400);
  }
}

async function jobOf(operationId: string) {
  return t.h.database.db.selectFrom('jobs').select(['state', 'attempts']).where('operation_id', '=', operationId).executeTakeFirstOrThrow();
}

/** The provider is healthy again: the pending cleanups run. */
async function recover() {
  t.stub.clearFaults();
  t.stub.actionPolls = 1;
  await attempts(2);
}

async function suspendedMachine() {
  const m = await runningMachine(t);
  await suspend(t, m);
  await t.h.app.jobs.runDue();
  const machine = await getMachine(t, m.id);
  assert.equal(machine.status, 'suspended');
  const susp = (await suspensions(t)).find((s: { id: string }) => s.id === machine.suspension_id);
  return { machine, susp };
}

describe('create gives up', () => {
  test('a server made but never confirmed: the machine stays creating while the provider fails, then fails once the server is deleted', async () => {
    await t.h.app.jobs.runDue();
    const configId = await createConfig(t);
    t.stub.fail({ method: 'GET', path: /^\/actions\/\d+$/, status: 503, code: 'unavailable', times: FOREVER });
    t.stub.fail({ method: 'GET', path: /^\/servers$/, skip: 1, status: 503, code: 'unavailable', times: FOREVER });
    const m = (await t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: configId, server_type: 'cx22' } })).json();
    await attempts(30);
    assert.equal(serversOf(m.id).length, 1, 'the server exists at the provider');
    assert.equal((await getMachine(t, m.id)).status, 'creating', 'not failed while its server may still exist');
    assert.equal((await getOperation(t, m.operation_id)).done, false);
    assert.equal((await jobOf(m.operation_id)).state, 'queued', 'the cleanup is still due');

    await recover();
    assert.deepEqual(serversOf(m.id), [], 'no server left');
    const failed = await getMachine(t, m.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.provider_server_id, null);
    const op = await getOperation(t, m.operation_id);
    assert.equal(op.error.code, 7404);
    assert.match(op.error.message, /Gave up after 25 attempts/);
  });
});

describe('suspend gives up', () => {
  test('before the server is deleted: back to running on its server once every snapshot of the operation is deleted', async () => {
    const m = await runningMachine(t);
    t.stub.fail({ method: 'DELETE', path: /^\/servers\/\d+$/, status: 503, code: 'unavailable', times: FOREVER });
    t.stub.fail({ method: 'GET', path: /^\/servers\/\d+$/, skip: 1, status: 503, code: 'unavailable', times: FOREVER });
    t.stub.fail({ method: 'DELETE', path: /^\/images\/\d+$/, status: 503, code: 'unavailable', times: FOREVER });
    const op = (await suspend(t, m)).json().operation_id;
    await attempts(30);
    assert.equal(snapshotsOf(m.id).length, 1);
    assert.equal((await getMachine(t, m.id)).status, 'suspending', 'the server state is unknown: nothing is decided');
    assert.equal((await getOperation(t, op)).done, false);

    await recover();
    const back = await getMachine(t, m.id);
    assert.equal(back.status, 'running');
    assert.equal(back.provider_server_id, m.provider_server_id);
    assert.equal(back.suspension_id, null);
    assert.ok(platform().servers.has(m.provider_server_id));
    assert.deepEqual(snapshotsOf(m.id), [], 'no snapshot leaked');
    assert.equal(
      (await suspensions(t)).some((s: { hostname: string }) => s.hostname === m.hostname),
      false,
    );
    assert.equal((await getOperation(t, op)).error.code, 7404);
  });

  test('after the server is deleted: the snapshot is all that is left, so it is kept and the suspension recorded', async () => {
    const m = await runningMachine(t);
    // The first call of each passes: the snapshot is made, priced, and the server's deletion starts.
    t.stub.fail({ method: 'GET', path: /^\/actions\/\d+$/, skip: 1, status: 503, code: 'unavailable', times: FOREVER });
    t.stub.fail({ method: 'GET', path: /^\/servers\/\d+$/, skip: 1, status: 503, code: 'unavailable', times: FOREVER });
    t.stub.fail({ method: 'GET', path: /^\/pricing$/, skip: 1, status: 503, code: 'unavailable', times: FOREVER });
    const op = (await suspend(t, m)).json().operation_id;
    await t.h.app.jobs.runDue();
    t.stub.finishActions(); // the provider deletes the server meanwhile
    assert.equal(platform().servers.has(m.provider_server_id), false);
    await attempts(30);
    assert.equal((await getMachine(t, m.id)).status, 'suspending');
    const [snapshot] = snapshotsOf(m.id);
    assert.ok(snapshot, 'the only copy of the disk is still there');

    await recover();
    const after = await getMachine(t, m.id);
    assert.equal(after.status, 'suspended');
    assert.equal(after.provider_server_id, null);
    const susp = (await suspensions(t)).find((s: { id: string }) => s.id === after.suspension_id);
    assert.equal(susp?.provider_suspend_data.snapshot_id, snapshot.id);
    assert.equal(susp?.reason, 'manual');
    assert.ok(platform().snapshots.has(snapshot.id), 'never deleted');
    const result = await getOperation(t, op);
    assert.equal(result.error, null);
    assert.deepEqual(result.result, { machine_id: m.id, suspension_id: after.suspension_id, snapshot_id: snapshot.id });
    // It behaves like any suspension: it resumes.
    assert.equal((await resume(after.suspension_id)).statusCode, 200);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'running');
  });

  test('a snapshot that never finishes: 7407 after 25 attempts; the snapshot is deleted once the provider confirms the server exists, then running', async () => {
    const m = await runningMachine(t);
    t.stub.actionPolls = FOREVER;
    const op = (await suspend(t, m)).json().operation_id;
    // The cleanup meets the provider failing too, at first.
    t.stub.fail({ method: 'DELETE', path: /^\/images\/\d+$/, status: 503, code: 'unavailable', times: 3 });
    await attempts(25);
    assert.equal(snapshotsOf(m.id)[0]?.status, 'creating');
    assert.equal((await getMachine(t, m.id)).status, 'suspending', 'not running again while its snapshot is still there');
    assert.equal((await getOperation(t, op)).done, false);
    await attempts(4);
    const back = await getMachine(t, m.id);
    assert.equal(back.status, 'running');
    assert.equal(back.provider_server_id, m.provider_server_id);
    assert.ok(platform().servers.has(m.provider_server_id));
    assert.deepEqual(snapshotsOf(m.id), []);
    const result = await getOperation(t, op);
    assert.equal(result.error.code, 7407);
    assert.match(result.error.message, /Gave up after 25 attempts: the provider did not finish the snapshot in time/);
    t.stub.actionPolls = 1;
  });
});

describe('resume gives up', () => {
  test('a new server made but never confirmed: suspended again only once the server is deleted; the snapshot kept', async () => {
    const { machine, susp } = await suspendedMachine();
    t.stub.fail({ method: 'GET', path: /^\/actions\/\d+$/, status: 503, code: 'unavailable', times: FOREVER });
    t.stub.fail({ method: 'GET', path: /^\/servers$/, skip: 1, status: 503, code: 'unavailable', times: FOREVER });
    const op = (await resume(susp.id)).json().operation_id;
    await attempts(30);
    assert.equal(serversOf(machine.id).length, 1);
    assert.equal((await getMachine(t, machine.id)).status, 'resuming', 'not suspended while a new server may run');
    assert.equal((await getOperation(t, op)).done, false);

    await recover();
    assert.deepEqual(serversOf(machine.id), [], 'no server leaked');
    const after = await getMachine(t, machine.id);
    assert.equal(after.status, 'suspended');
    assert.equal(after.suspension_id, susp.id);
    assert.ok(
      (await suspensions(t)).some((s: { id: string }) => s.id === susp.id),
      'listed again',
    );
    assert.ok(platform().snapshots.has(susp.provider_suspend_data.snapshot_id));
    assert.equal((await getOperation(t, op)).error.code, 7404);
  });

  test('the snapshot gone but the new server there: it is the only copy, so the resume finishes after all', async () => {
    const { machine, susp } = await suspendedMachine();
    t.stub.actionPolls = FOREVER;
    const op = (await resume(susp.id)).json().operation_id;
    await t.h.app.jobs.runDue();
    const [server] = serversOf(machine.id);
    assert.ok(server);
    platform().snapshots.delete(susp.provider_suspend_data.snapshot_id);
    t.stub.fail({ method: 'GET', path: /^\/servers$/, status: 403, code: 'forbidden', message: 'not allowed' });
    await attempts(2);
    const after = await getMachine(t, machine.id);
    assert.equal(after.status, 'running');
    assert.equal(after.provider_server_id, server.id);
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === susp.id),
      false,
    );
    assert.deepEqual((await getOperation(t, op)).result, { machine_id: machine.id, provider_server_id: server.id });
    t.stub.actionPolls = 1;
    t.stub.finishActions();
  });

  test('neither the snapshot nor a server left: the machine failed (7405), the suspension over', async () => {
    const { machine, susp } = await suspendedMachine();
    platform().snapshots.delete(susp.provider_suspend_data.snapshot_id);
    const op = (await resume(susp.id)).json().operation_id;
    await t.h.app.jobs.runDue();
    const after = await getMachine(t, machine.id);
    assert.equal(after.status, 'failed');
    assert.equal(after.suspension_id, null);
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === susp.id),
      false,
    );
    assert.equal((await getOperation(t, op)).error.code, 7405);
    assert.deepEqual(serversOf(machine.id), []);
    assert.equal((await resume(susp.id)).statusCode, 404);
  });
});
