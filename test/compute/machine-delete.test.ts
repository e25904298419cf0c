import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { BYO_TOKEN, useComputeTestApp, secondInstance, CONFIG_BODY, createConfig, getMachine, getOperation, PLATFORM_TOKEN, runningMachine, suspend, suspensions } from './setup.js';

/** docs/spec-gaps.md, "Lifecycles": DELETE /v1/machines/{id}, POST /v1/machines/{id}:resume, and the compute config's 409 naming its machines. */
const t = useComputeTestApp();

const FOREVER = 1_000_000;
const serversOf = (machineId: string, token = PLATFORM_TOKEN) => [...t.stub.project(token).servers.values()].filter((s) => s.labels['wsp-machine'] === machineId.slice(4));
const snapshotsOf = (machineId: string, token = PLATFORM_TOKEN) => [...t.stub.project(token).snapshots.values()].filter((i) => i.labels['wsp-machine'] === machineId.slice(4));

const del = (id: string, etag: string | null) =>
  t.h.app.inject({ method: 'DELETE', url: `/v1/machines/${id}`, headers: as(t.s.apiToken, undefined, etag === null ? {} : { 'if-match': `"${etag}"` }) });
const resume = (id: string, etag?: string) =>
  t.h.app.inject({ method: 'POST', url: `/v1/machines/${id}:resume`, headers: as(t.s.apiToken, undefined, etag === undefined ? {} : { 'if-match': `"${etag}"` }) });
const status = async (id: string) => (await t.h.app.inject({ method: 'GET', url: `/v1/machines/${id}`, headers: as(t.s.apiToken) })).statusCode;

/** Runs the jobs `times` times, a backoff's worth (the 5-minute cap) apart: one attempt each. */
async function attempts(times: number) {
  for (let i = 0; i < times; i++) {
    await t.h.app.jobs.runDue();
    t.h.clock.advanceSeconds(400);
  }
}

async function suspendedMachine() {
  const m = await runningMachine(t);
  assert.equal((await suspend(t, m)).statusCode, 200);
  await t.h.app.jobs.runDue();
  const machine = await getMachine(t, m.id);
  assert.equal(machine.status, 'suspended');
  return machine;
}

describe('DELETE /v1/machines/{id}', () => {
  test('a running machine: 202 with the operation, `deleting`, then its server is gone at the provider and the machine is 404', async () => {
    const m = await runningMachine(t);
    assert.equal(serversOf(m.id).length, 1);
    const res = await del(m.id, m.etag);
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(Object.keys(res.json()), ['operation_id']);
    const deleting = await getMachine(t, m.id);
    assert.equal(deleting.status, 'deleting');
    assert.equal(deleting.operation_id, res.json().operation_id);
    assert.equal((await getOperation(t, res.json().operation_id)).done, false);

    await t.h.app.jobs.runDue();
    assert.equal(await status(m.id), 404);
    assert.deepEqual(serversOf(m.id), []);
    const op = await getOperation(t, res.json().operation_id);
    assert.equal(op.done, true);
    assert.equal(op.kind, 'machine.delete');
    assert.equal(op.error, null);
    assert.deepEqual(op.result, { machine_id: m.id, deleted: true });
    const listed = (await t.h.app.inject({ method: 'GET', url: '/v1/machines?limit=100', headers: as(t.s.apiToken) })).json().data;
    assert.equal(
      listed.some((x: { id: string }) => x.id === m.id),
      false,
    );
  });

  test('If-Match is required (422 at headers.if-match) and must be current (409 with metadata.current_etag); a machine of another workspace is 404', async () => {
    const m = await runningMachine(t);
    const missing = await del(m.id, null);
    assert.equal(missing.statusCode, 422, missing.body);
    assert.deepEqual(firstError(missing.json()).path, ['headers', 'if-match']);
    const stale = await del(m.id, 'stale');
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).metadata?.current_etag, m.etag);
    const stranger = await t.h.seed('Stranger');
    const across = await t.h.app.inject({ method: 'DELETE', url: `/v1/machines/${m.id}`, headers: as(stranger.apiToken, undefined, { 'if-match': '*' }) });
    assert.equal(across.statusCode, 404);
    assert.equal((await getMachine(t, m.id)).status, 'running');
  });

  test('already being deleted: 409 (7408) with its status and operation; one being created: 409 with status creating', async () => {
    const m = await runningMachine(t);
    const first = await del(m.id, m.etag);
    const again = await del(m.id, (await getMachine(t, m.id)).etag);
    assert.equal(again.statusCode, 409);
    const err = firstError(again.json());
    assert.equal(err.code, 7408);
    assert.deepEqual(err.metadata, { status: 'deleting', operation_id: first.json().operation_id });
    assert.match(err.message, /already being deleted/);
    await t.h.app.jobs.runDue();

    const configId = await createConfig(t);
    const creating = (await t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: configId, server_type: 'cx22' } })).json();
    const early = await del(creating.id, creating.etag);
    assert.equal(early.statusCode, 409);
    assert.equal(firstError(early.json()).metadata?.status, 'creating');
    await t.h.app.jobs.runDue();
  });

  test('a suspended machine: its suspension is gone at once (not listed, resume 404), then its snapshot at the provider', async () => {
    const m = await suspendedMachine();
    const suspensionId = m.suspension_id;
    assert.equal(snapshotsOf(m.id).length, 1);
    assert.equal((await del(m.id, m.etag)).statusCode, 202);
    assert.equal(
      (await suspensions(t)).some((s: { id: string }) => s.id === suspensionId),
      false,
    );
    const resumed = await t.h.app.inject({ method: 'POST', url: `/v1/compute/suspensions/${suspensionId}:resume`, headers: as(t.s.apiToken) });
    assert.equal(resumed.statusCode, 404);
    await t.h.app.jobs.runDue();
    assert.equal(await status(m.id), 404);
    assert.deepEqual(snapshotsOf(m.id), []);
    assert.deepEqual(serversOf(m.id), []);
    const rows = await t.h.database.db.selectFrom('compute_suspensions').select('id').where('machine_id', '=', m.id).execute();
    assert.deepEqual(rows, [], 'its suspensions go with it');
  });

  test('the provider failing for hours: the machine stays `deleting` (operation pending), then nothing is left once it recovers', async () => {
    const m = await suspendedMachine();
    const started = await del(m.id, m.etag);
    t.stub.fail({ method: 'DELETE', path: /^\/images\/\d+$/, status: 503, code: 'unavailable', times: FOREVER });
    await attempts(30);
    assert.equal((await getMachine(t, m.id)).status, 'deleting', 'not gone while its snapshot may remain');
    assert.equal(snapshotsOf(m.id).length, 1);
    assert.equal((await getOperation(t, started.json().operation_id)).done, false);

    t.stub.clearFaults();
    await attempts(2);
    assert.equal(await status(m.id), 404);
    assert.deepEqual(snapshotsOf(m.id), []);
    assert.equal((await getOperation(t, started.json().operation_id)).done, true);
  });

  test('a server deletion the provider answers with 500s and timeouts of its actions: retried until confirmed', async () => {
    const m = await runningMachine(t);
    t.stub.fail({ method: 'DELETE', path: /^\/servers\/\d+$/, status: 500, code: 'server_error', times: 3 });
    const started = await del(m.id, m.etag);
    await attempts(5);
    assert.equal(await status(m.id), 404);
    assert.deepEqual(serversOf(m.id), []);
    assert.equal((await getOperation(t, started.json().operation_id)).done, true);
  });

  test("a second instance's worker finishes a deletion the first accepted (the job is in the database, not in a process)", async () => {
    const m = await runningMachine(t);
    const started = await del(m.id, m.etag);
    await secondInstance(t, 'after-a-restart').runner.runDue();
    assert.equal(await status(m.id), 404);
    assert.deepEqual(serversOf(m.id), []);
    assert.equal((await getOperation(t, started.json().operation_id)).done, true);
  });

  test("a config's own account that cannot be used: the machine ends failed with what may be left recorded; deleting it again once the account works finishes", async () => {
    const secret = (await t.h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(t.s.apiToken), payload: { name: 'own-account-for-delete' } })).json();
    const version = (
      await t.h.app.inject({ method: 'POST', url: `/v1/secrets/${secret.id}/versions`, headers: as(t.s.apiToken), payload: { data: Buffer.from(BYO_TOKEN).toString('base64') } })
    ).json();
    const m = await runningMachine(t, {}, { ...CONFIG_BODY, secret_id: secret.id });
    assert.equal(serversOf(m.id, BYO_TOKEN).length, 1);
    const disabled = await t.h.app.inject({
      method: 'POST',
      url: `/v1/secrets/${secret.id}/versions/${version.id}:disable`,
      headers: as(t.s.apiToken, undefined, { 'if-match': `"${version.etag}"` }),
    });
    assert.equal(disabled.statusCode, 200);

    const started = await del(m.id, m.etag);
    await t.h.app.jobs.runDue();
    const failed = await getMachine(t, m.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.provider_server_id, m.provider_server_id, 'what may be left stays recorded');
    assert.equal((await getOperation(t, started.json().operation_id)).error.code, 7403);
    assert.equal(serversOf(m.id, BYO_TOKEN).length, 1);

    const enabled = await t.h.app.inject({ method: 'POST', url: `/v1/secrets/${secret.id}/versions/${version.id}:enable`, headers: as(t.s.apiToken, undefined, { 'if-match': '*' }) });
    assert.equal(enabled.statusCode, 200, enabled.body);
    assert.equal((await del(m.id, failed.etag)).statusCode, 202);
    await t.h.app.jobs.runDue();
    assert.equal(await status(m.id), 404);
    assert.deepEqual(serversOf(m.id, BYO_TOKEN), []);
  });
});

describe('POST /v1/machines/{id}:resume', () => {
  test('resumes a suspended machine as its suspension would; If-Match is checked when sent', async () => {
    const m = await suspendedMachine();
    const stale = await resume(m.id, 'stale');
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).metadata?.current_etag, m.etag);
    const res = await resume(m.id, m.etag);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'resuming');
    assert.equal(res.headers.etag, `"${res.json().etag}"`);
    await t.h.app.jobs.runDue();
    const running = await getMachine(t, m.id);
    assert.equal(running.status, 'running');
    assert.equal(running.suspension_id, null);
    assert.deepEqual(snapshotsOf(m.id), []);
  });

  test('a machine that is not suspended: 409 (7409) with its status; an unknown one 404', async () => {
    const m = await runningMachine(t);
    const res = await resume(m.id);
    assert.equal(res.statusCode, 409);
    assert.equal(firstError(res.json()).code, 7409);
    assert.deepEqual(firstError(res.json()).metadata, { status: 'running' });
    assert.equal((await resume('mch_nope')).statusCode, 404);
  });

  test('resumes by machine and by suspension at once: one 200, one 409; one resume job', async () => {
    const m = await suspendedMachine();
    const [a, b] = await Promise.all([resume(m.id), t.h.app.inject({ method: 'POST', url: `/v1/compute/suspensions/${m.suspension_id}:resume`, headers: as(t.s.apiToken) })]);
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 409], `${a.body} ${b.body}`);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'running');
    assert.equal(serversOf(m.id).length, 1);
  });
});

describe('DELETE /v1/compute/configs/{id} while machines use it', () => {
  test('409 (7400) naming them in metadata.machine_ids; once they are deleted, the config can be', async () => {
    const configId = await createConfig(t);
    const made = [];
    for (let i = 0; i < 2; i++) {
      const res = await t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: configId, server_type: 'cx22' } });
      made.push(res.json().id as string);
    }
    await t.h.app.jobs.runDue();
    const config = (await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs/${configId}`, headers: as(t.s.apiToken) })).json();
    const delConfig = () => t.h.app.inject({ method: 'DELETE', url: `/v1/compute/configs/${configId}`, headers: as(t.s.apiToken, undefined, { 'if-match': `"${config.etag}"` }) });
    const refused = await delConfig();
    assert.equal(refused.statusCode, 409);
    const err = firstError(refused.json());
    assert.equal(err.code, 7400);
    assert.deepEqual(err.metadata!.machine_ids!.split(',').sort(), [...made].sort());
    for (const id of made) assert.ok(err.message.includes(id));

    for (const id of made) assert.equal((await del(id, (await getMachine(t, id)).etag)).statusCode, 202);
    assert.equal((await delConfig()).statusCode, 409, 'still used while they are being deleted');
    await t.h.app.jobs.runDue();
    assert.equal((await delConfig()).statusCode, 204);
  });
});
