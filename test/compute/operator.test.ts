import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { runWsp } from '../helpers/processes.js';
import { useComputeTestApp, getMachine, getOperation, runningMachine, suspensions } from './setup.js';

/**
 * docs/spec-gaps.md, "Compute": `downgrade` is the reason when the platform suspends a machine for a plan
 * downgrade. The platform does that through `wsp admin machine suspend` (the real binary,
 * offline against the database), which queues the same job as the API's `:suspend`.
 */
const t = useComputeTestApp();

const admin = (...args: string[]) => runWsp(['admin', 'machine', 'suspend', ...args], t.h.dbEnv);
/** The command runs on real time (it queues the job for now); the app's worker runs on the test's clock. */
async function runJobs() {
  t.h.clock.set(Math.max(t.h.clock.nowMs(), Date.now() + 1000));
  await t.h.app.jobs.runDue();
}

describe('wsp admin machine suspend', () => {
  test("--reason downgrade: the machine is suspended by a server's worker and its suspension lists reason downgrade", async () => {
    const m = await runningMachine(t, { hostname: 'plan-1' });
    const res = await admin('--machine', m.id.slice(4), '--reason', 'downgrade', '--json');
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout.trim());
    assert.deepEqual(Object.keys(out).sort(), ['machine_id', 'operation_id', 'reason', 'status', 'workspace_id']);
    assert.equal(out.machine_id, m.id);
    assert.equal(out.workspace_id, t.s.workspaceId);
    assert.equal(out.status, 'suspending');
    assert.equal(out.reason, 'downgrade');
    const pending = await getMachine(t, m.id);
    assert.equal(pending.status, 'suspending');
    assert.equal(pending.operation_id, out.operation_id);
    assert.notEqual(pending.etag, m.etag, 'a new etag, as for any change');

    await runJobs();
    const done = await getMachine(t, m.id);
    assert.equal(done.status, 'suspended');
    const susp = (await suspensions(t)).find((s: { id: string }) => s.id === done.suspension_id);
    assert.equal(susp.reason, 'downgrade');
    assert.equal(susp.hostname, 'plan-1');
    const op = await getOperation(t, out.operation_id);
    assert.equal(op.kind, 'machine.suspend');
    assert.deepEqual(op.result, { machine_id: m.id, suspension_id: done.suspension_id, snapshot_id: susp.provider_suspend_data.snapshot_id });
  });

  test('refused with a one-line error: an unknown machine, one not running, a reason that is not manual or downgrade; flags missing: usage', async () => {
    const m = await runningMachine(t);
    const unknown = await admin('--machine', 'mch_01jabcdefghjkmnpqrstvwxyz0', '--reason', 'downgrade');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^error: unknown machine mch_01jabcdefghjkmnpqrstvwxyz0\n$/);
    const bad = await admin('--machine', m.id, '--reason', 'budget');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--reason must be one of manual, downgrade/);
    assert.equal((await getMachine(t, m.id)).status, 'running', 'nothing changed');
    assert.equal((await admin('--machine', m.id)).code, 2);
    assert.equal((await admin('--reason', 'downgrade')).code, 2);

    assert.equal((await admin('--machine', m.id, '--reason', 'manual')).code, 0);
    const again = await admin('--machine', m.id, '--reason', 'downgrade');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /only a running machine can be suspended; .* is suspending/);
    await runJobs();
    const done = await getMachine(t, m.id);
    assert.equal((await suspensions(t)).find((s: { id: string }) => s.id === done.suspension_id).reason, 'manual');
  });
});
