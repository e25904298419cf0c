import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as } from '../helpers/harness.js';
import type { JobRunner } from '../../src/jobs/runner.js';
import { expiryScanJob, SNAPSHOT_DELETE_RETRY_SECONDS } from '../../src/compute/scheduler/expiry-scan.js';
import type { ComputeJobDeps } from '../../src/compute/jobs/common.js';
import { useComputeTestApp, secondInstance, getMachine, getOperation, PLATFORM_TOKEN, runningMachine, suspend, suspensions } from './setup.js';
import { injectClient, type Schemas } from '../helpers/test-app.js';
import { unwrap } from '@workspace-platform/sdk';

const DAY = 86_400;
/** A second server instance's worker on the same database and provider. */
let other: JobRunner;
let otherDeps: ComputeJobDeps;

const t = useComputeTestApp(
  { schedulerIntervalSeconds: 60 },
  {
    setup: () => {
      ({ runner: other, deps: otherDeps } = secondInstance(t, 'second-instance'));
    },
  },
);

type Notice = Schemas['Notification'];

async function noticesOf(session: string, machineId: string): Promise<Notice[]> {
  return (await unwrap(injectClient(t.h.app, session).GET('/v1/notifications'))).data.filter((n) => n.resource_id === machineId);
}

/** Both instances' workers at once, as on a deployment with two servers. */
const runBoth = () => Promise.all([t.h.app.jobs.runDue(), other.runDue()]);

async function suspendedMachine() {
  const m = await runningMachine(t);
  await suspend(t, m);
  await t.h.app.jobs.runDue();
  const machine = await getMachine(t, m.id);
  const susp = (await suspensions(t)).find((s: { id: string }) => s.id === machine.suspension_id);
  return { machine, susp };
}

/** Moves the clock to `secondsLeft` before the suspension's expiry. */
function moveTo(expiresAt: number, secondsLeft: number) {
  t.h.clock.set((expiresAt - secondsLeft) * 1000);
}

describe('the expiry scheduler', () => {
  test('a 7-day info and a 1-day warning to owners and admins, each once, with two server instances running', async () => {
    const { machine, susp } = await suspendedMachine();
    await runBoth();
    assert.deepEqual(await noticesOf(t.s.owner.session, machine.id), [], 'nothing while more than 7 days remain');

    moveTo(susp.expires_at, 7 * DAY + 60);
    await runBoth();
    assert.deepEqual(await noticesOf(t.s.owner.session, machine.id), []);

    moveTo(susp.expires_at, 7 * DAY);
    await runBoth();
    await runBoth();
    t.h.clock.advanceSeconds(3600);
    await runBoth();
    for (const who of [t.s.owner, t.s.admin]) {
      const notes = await noticesOf(who.session, machine.id);
      assert.equal(notes.length, 1, 'one info notice each');
      const n = notes[0]!;
      assert.equal(n.type, 'machine_expiry');
      assert.equal(n.resource_type, 'machine');
      assert.equal(n.severity, 'info');
      assert.match(n.title, /is deleted in 7 days/);
      assert.match(n.body, new RegExp(machine.hostname));
      assert.deepEqual(n.context, { workspace_id: t.s.workspaceId, suspension_id: susp.id, machine_id: machine.id, hostname: machine.hostname, expires_at: susp.expires_at });
    }
    assert.deepEqual(await noticesOf(t.s.member.session, machine.id), [], 'members get none');

    moveTo(susp.expires_at, DAY + 1);
    await runBoth();
    assert.equal((await noticesOf(t.s.owner.session, machine.id)).length, 1);
    moveTo(susp.expires_at, DAY);
    await Promise.all([runBoth(), runBoth()]);
    t.h.clock.advanceSeconds(120);
    await runBoth();
    for (const who of [t.s.owner, t.s.admin]) {
      const notes = await noticesOf(who.session, machine.id);
      assert.deepEqual(
        notes.map((n) => n.severity),
        ['warning', 'info'],
      );
      assert.match(notes[0]!.title, /is deleted in 1 day$/);
    }
  });

  test('scans that overlap (a lease taken over mid-scan) still send each notice once: the unique key in the database', async () => {
    const { machine, susp } = await suspendedMachine();
    moveTo(susp.expires_at, 3 * DAY);
    const scan = expiryScanJob(otherDeps);
    await Promise.all([scan(), scan(), scan()]);
    assert.deepEqual(
      (await noticesOf(t.s.owner.session, machine.id)).map((n) => n.severity),
      ['info'],
    );
    assert.deepEqual(
      (await noticesOf(t.s.admin.session, machine.id)).map((n) => n.severity),
      ['info'],
    );
  });

  test('both thresholds passed at the first check: only the warning', async () => {
    const { machine, susp } = await suspendedMachine();
    moveTo(susp.expires_at, DAY / 2);
    await runBoth();
    t.h.clock.advanceSeconds(60);
    await runBoth();
    const notes = await noticesOf(t.s.owner.session, machine.id);
    assert.deepEqual(
      notes.map((n) => n.severity),
      ['warning'],
    );
    assert.match(notes[0]!.title, /in 1 day/);
  });

  test('on expiry the snapshot is deleted at the provider and the suspension ends', async () => {
    const { machine, susp } = await suspendedMachine();
    const snapshotId = susp.provider_suspend_data.snapshot_id;
    moveTo(susp.expires_at, 1);
    await runBoth();
    assert.ok(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId));
    // Within one scheduler interval of the expiry.
    moveTo(susp.expires_at, -60);
    await runBoth();
    assert.equal(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId), false);
    assert.equal(t.stub.requestsTo('DELETE', new RegExp(`^/images/${snapshotId}$`)).length, 1, 'deleted once');
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === susp.id),
      false,
    );
    const after = await getMachine(t, machine.id);
    assert.equal(after.status, 'expired');
    assert.equal(after.suspension_id, null);
    const resume = await t.h.app.inject({ method: 'POST', url: `/v1/compute/suspensions/${susp.id}:resume`, headers: as(t.s.apiToken) });
    assert.equal(resume.statusCode, 404);
  });

  test('the provider failing to delete the snapshot: the suspension still ends, and the deletion is retried', async () => {
    const { machine, susp } = await suspendedMachine();
    const snapshotId = susp.provider_suspend_data.snapshot_id;
    t.stub.fail({ method: 'DELETE', path: /^\/images\/\d+$/, status: 503, code: 'unavailable', times: 2 });
    moveTo(susp.expires_at, -5);
    await runBoth();
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === susp.id),
      false,
    );
    assert.equal((await getMachine(t, machine.id)).status, 'expired');
    assert.ok(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId), 'not yet deleted');
    for (let i = 0; i < 3; i++) {
      t.h.clock.advanceSeconds(30);
      await runBoth();
    }
    assert.equal(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId), false);
  });

  test('the scan itself ends a suspension past its expiry: a resume right after it is 404 even before any job ran', async () => {
    const { machine, susp } = await suspendedMachine();
    moveTo(susp.expires_at, -5);
    await expiryScanJob(otherDeps)();
    const resume = await t.h.app.inject({ method: 'POST', url: `/v1/compute/suspensions/${susp.id}:resume`, headers: as(t.s.apiToken) });
    assert.equal(resume.statusCode, 404);
    assert.equal((await getMachine(t, machine.id)).status, 'expired');
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === susp.id),
      false,
    );
    await runBoth();
    assert.equal(t.stub.project(PLATFORM_TOKEN).snapshots.has(susp.provider_suspend_data.snapshot_id), false);
  });

  test('a suspension being resumed at its expiry is left alone; when that resume fails, the next scan expires it and deletes the snapshot', async () => {
    const { machine, susp } = await suspendedMachine();
    const snapshotId = susp.provider_suspend_data.snapshot_id;
    // The new server never finishes starting, so the resume is still under way at the expiry.
    t.stub.actionPolls = 1000;
    moveTo(susp.expires_at, -5);
    const resumed = await t.h.app.inject({ method: 'POST', url: `/v1/compute/suspensions/${susp.id}:resume`, headers: as(t.s.apiToken) });
    assert.equal(resumed.statusCode, 200, 'past expires_at but not yet expired: it can be resumed');
    for (let i = 0; i < 3; i++) {
      await runBoth();
      t.h.clock.advanceSeconds(61);
    }
    assert.equal((await getMachine(t, machine.id)).status, 'resuming', 'the expiry changed nothing while the resume ran');
    // The provider now refuses the resume for good: it undoes itself and the suspension is active again.
    t.stub.fail({ method: 'GET', path: /^\/servers$/, status: 403, code: 'forbidden', message: 'not allowed' });
    t.stub.actionPolls = 1;
    t.stub.finishActions();
    for (let i = 0; i < 4; i++) {
      t.h.clock.advanceSeconds(61);
      await runBoth();
    }
    assert.equal((await getOperation(t, resumed.json().operation_id)).error.code, 7405);
    const after = await getMachine(t, machine.id);
    assert.equal(after.status, 'expired', 'expired by a later scan');
    assert.equal(after.suspension_id, null);
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === susp.id),
      false,
      'no longer listed (nor billed)',
    );
    assert.equal(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId), false, 'the snapshot is deleted');
    assert.deepEqual(
      [...t.stub.project(PLATFORM_TOKEN).servers.values()].filter((s) => s.labels['wsp-machine'] === machine.id.slice(4)),
      [],
      'no server left',
    );
  });

  test('a snapshot deletion that gave up is queued again each retry period until the provider confirms; meanwhile its config cannot be deleted', async () => {
    const { machine, susp } = await suspendedMachine();
    const snapshotId = susp.provider_suspend_data.snapshot_id;
    t.stub.fail({ method: 'DELETE', path: new RegExp(`^/images/${snapshotId}$`), status: 503, code: 'unavailable', times: 100_000 });
    moveTo(susp.expires_at, -5);
    // Start a retry period afresh, so the first job spends all its attempts inside it.
    t.h.clock.set((Math.ceil(t.h.clock.nowMs() / 1000 / SNAPSHOT_DELETE_RETRY_SECONDS) * SNAPSHOT_DELETE_RETRY_SECONDS + 1) * 1000);
    for (let i = 0; i < 27; i++) {
      await runBoth();
      t.h.clock.advanceSeconds(380);
    }
    const deletions = await t.h.database.db.selectFrom('jobs').select(['state', 'attempts']).where('kind', '=', 'compute.suspension_expire').where('payload', 'like', `%${susp.id}%`).execute();
    assert.deepEqual(
      deletions.map((j) => [j.state, j.attempts]),
      [['failed', 25]],
      'the first deletion gave up',
    );
    assert.ok(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId));
    assert.equal((await getMachine(t, machine.id)).status, 'expired');

    // The provider still holds the machine's data: the config's account is still needed.
    const configUrl = `/v1/compute/configs/${machine.compute_config_id}`;
    const refused = await t.h.app.inject({ method: 'DELETE', url: configUrl, headers: as(t.s.apiToken, undefined, { 'if-match': '*' }) });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().errors[0].code, 7400);

    t.stub.clearFaults();
    t.h.clock.advanceSeconds(SNAPSHOT_DELETE_RETRY_SECONDS);
    await runBoth();
    await runBoth();
    assert.equal(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId), false, 'deleted by the job of the next period');
    const row = await t.h.database.db.selectFrom('machines').select(['snapshot_id']).where('id', '=', machine.id).executeTakeFirstOrThrow();
    assert.equal(row.snapshot_id, null);
    t.h.clock.advanceSeconds(SNAPSHOT_DELETE_RETRY_SECONDS);
    await runBoth();
    const after = await t.h.database.db.selectFrom('jobs').select(['state']).where('kind', '=', 'compute.suspension_expire').where('payload', 'like', `%${susp.id}%`).execute();
    assert.equal(after.length, 2, 'nothing more is queued once the provider confirmed');
    assert.equal((await t.h.app.inject({ method: 'DELETE', url: configUrl, headers: as(t.s.apiToken, undefined, { 'if-match': '*' }) })).statusCode, 204);
  });
});
