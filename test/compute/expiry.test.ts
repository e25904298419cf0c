import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { as } from '../helpers/harness.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { registerComputeJobs } from '../../src/compute/jobs/register.js';
import { expiryScanJob } from '../../src/compute/scheduler/expiry-scan.js';
import type { ComputeJobDeps } from '../../src/compute/jobs/common.js';
import { createProviderAccounts } from '../../src/compute/provider/accounts.js';
import { computeTestApp, getMachine, PLATFORM_TOKEN, runningMachine, suspend, suspensions, type ComputeTest } from './setup.js';

const DAY = 86_400;
let t: ComputeTest;
/** A second server instance's worker on the same database and provider. */
let other: JobRunner;
let otherDeps: ComputeJobDeps;

before(async () => {
  t = await computeTestApp({ schedulerIntervalSeconds: 60 });
  other = new JobRunner({ db: t.h.database.db, engine: t.h.database.engine, clock: t.h.clock, log: pino({ level: 'silent' }) }, { workerId: 'second-instance' });
  otherDeps = {
    db: t.h.database.db,
    engine: t.h.database.engine,
    clock: t.h.clock,
    log: pino({ level: 'silent' }),
    jobs: other,
    config: t.h.config,
    accounts: createProviderAccounts(t.h.config.provider, t.h.clock),
    secrets: { exists: async () => false, newestEnabledPayload: async () => null },
  };
  registerComputeJobs(otherDeps);
});
after(() => t.close());

interface Notice {
  id: string;
  type: string;
  resource_type: string;
  resource_id: string;
  title: string;
  body: string;
  severity: string;
  context: Record<string, unknown>;
  read_at: number | null;
}

async function noticesOf(session: string, machineId: string): Promise<Notice[]> {
  const res = await t.h.app.inject({ method: 'GET', url: '/v1/notifications', headers: as(session) });
  return (res.json().data as Notice[]).filter((n) => n.resource_id === machineId);
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
      assert.deepEqual(notes.map((n) => n.severity), ['warning', 'info']);
      assert.match(notes[0]!.title, /is deleted in 1 day$/);
    }
  });

  test('scans that overlap (a lease taken over mid-scan) still send each notice once: the unique key in the database', async () => {
    const { machine, susp } = await suspendedMachine();
    moveTo(susp.expires_at, 3 * DAY);
    const scan = expiryScanJob(otherDeps);
    await Promise.all([scan(), scan(), scan()]);
    assert.deepEqual((await noticesOf(t.s.owner.session, machine.id)).map((n) => n.severity), ['info']);
    assert.deepEqual((await noticesOf(t.s.admin.session, machine.id)).map((n) => n.severity), ['info']);
  });

  test('both thresholds passed at the first check: only the warning', async () => {
    const { machine, susp } = await suspendedMachine();
    moveTo(susp.expires_at, DAY / 2);
    await runBoth();
    t.h.clock.advanceSeconds(60);
    await runBoth();
    const notes = await noticesOf(t.s.owner.session, machine.id);
    assert.deepEqual(notes.map((n) => n.severity), ['warning']);
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
    assert.equal((await suspensions(t)).some((s: { id: string }) => s.id === susp.id), false);
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
    assert.equal((await suspensions(t)).some((s: { id: string }) => s.id === susp.id), false);
    assert.equal((await getMachine(t, machine.id)).status, 'expired');
    assert.ok(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId), 'not yet deleted');
    for (let i = 0; i < 3; i++) {
      t.h.clock.advanceSeconds(30);
      await runBoth();
    }
    assert.equal(t.stub.project(PLATFORM_TOKEN).snapshots.has(snapshotId), false);
  });
});
