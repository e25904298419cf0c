import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useComputeTestApp, CONFIG_BODY, createConfig, getMachine, getOperation, PLATFORM_TOKEN, runningMachine } from './setup.js';

let configId: string;
const t = useComputeTestApp(
  {},
  {
    setup: async () => {
      configId = await createConfig(t);
    },
  },
);

const create = (payload: Record<string, unknown>, credential = t.s.apiToken) => t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(credential), payload });

describe('POST /v1/machines', () => {
  test('201 with the machine creating and its operation; the job makes the server, then it is running', async () => {
    const res = await create({ compute_config_id: configId, server_type: 'cx22', hostname: 'web-1.example.com' });
    assert.equal(res.statusCode, 201);
    const m = res.json();
    assert.deepEqual(Object.keys(m).sort(), [
      'cluster_id',
      'compute_config_id',
      'created_at',
      'etag',
      'hostname',
      'id',
      'image',
      'ipv4',
      'location',
      'operation_id',
      'provider',
      'provider_server_id',
      'server_type',
      'status',
      'suspension_id',
      'updated_at',
      'workspace_id',
    ]);
    assert.match(m.id, /^mch_[0-9a-z]{26}$/);
    assert.match(m.cluster_id, /^cl_[0-9a-z]{26}$/);
    assert.equal(m.status, 'creating');
    assert.equal(m.provider_server_id, null);
    assert.equal(m.location, 'fsn1');
    assert.equal(m.image, 'ubuntu-24.04');
    assert.equal(res.headers.etag, `"${m.etag}"`);
    assert.equal((await getOperation(t, m.operation_id)).done, false);

    await t.h.app.jobs.runDue();
    const running = await getMachine(t, m.id);
    assert.equal(running.status, 'running');
    assert.notEqual(running.etag, m.etag);
    const server = t.stub.project(PLATFORM_TOKEN).servers.get(running.provider_server_id)!;
    assert.equal(server.name, `wsp-${m.id.slice(4)}`);
    assert.equal(server.server_type, 'cx22');
    assert.equal(server.location, 'fsn1');
    assert.deepEqual(server.labels, { 'wsp-machine': m.id.slice(4) });
    assert.equal(running.ipv4, server.ipv4);
    const sent = t.stub.requestsTo('POST', /^\/servers$/).at(-1)!;
    assert.match(sent.body.user_data, /hostname: web-1\.example\.com/);
    assert.equal(sent.token, PLATFORM_TOKEN);
    const op = await getOperation(t, m.operation_id);
    assert.equal(op.done, true);
    assert.equal(op.kind, 'machine.create');
    assert.deepEqual(op.result, { machine_id: m.id, provider_server_id: server.id });
  });

  test('without cluster_id the default cluster, made once even for concurrent first machines; another workspace cluster is 404', async () => {
    const fresh = await t.h.seed('Clusters');
    const cfg = await createConfig(t, CONFIG_BODY, fresh.apiToken);
    const made = await Promise.all([0, 1, 2].map(() => create({ compute_config_id: cfg, server_type: 'cx22' }, fresh.apiToken)));
    assert.deepEqual(
      made.map((r) => r.statusCode),
      [201, 201, 201],
    );
    const clusters = new Set(made.map((r) => r.json().cluster_id));
    assert.equal(clusters.size, 1);
    const [clusterId] = [...clusters];
    const explicit = await create({ compute_config_id: cfg, server_type: 'cx22', cluster_id: clusterId!.slice(3) }, fresh.apiToken);
    assert.equal(explicit.json().cluster_id, clusterId);
    const foreign = await create({ compute_config_id: configId, server_type: 'cx22', cluster_id: clusterId! });
    assert.equal(foreign.statusCode, 404);
    assert.equal(firstError(foreign.json()).code, 7002);
    assert.deepEqual(firstError(foreign.json()).path, ['body', 'cluster_id']);
  });

  test("server_type must match the config's glob, exist at the provider and be offered in the region (422 on body.server_type)", async () => {
    const anyType = await createConfig(t, { ...CONFIG_BODY, machine_type_filter: '*' });
    const ashburn = await createConfig(t, { ...CONFIG_BODY, region: 'ash', machine_type_filter: '*' });
    const cases: [string, string, RegExp][] = [
      [configId, 'cpx11', /does not match/],
      [anyType, 'zz99', /not a server type/],
      [anyType, 'cx11', /not a server type/],
      [ashburn, 'cx22', /not offered in .*ash/],
    ];
    for (const [cfg, server_type, message] of cases) {
      const res = await create({ compute_config_id: cfg, server_type });
      assert.equal(res.statusCode, 422, server_type);
      assert.deepEqual(firstError(res.json()).path, ['body', 'server_type']);
      assert.match(firstError(res.json()).message, message);
    }
    assert.equal((await create({ compute_config_id: ashburn, server_type: 'cpx11' })).statusCode, 201);
  });

  test('an unknown or foreign compute_config_id is 404 on body.compute_config_id; malformed input is 422 per field', async () => {
    const other = await t.h.seed('Foreign');
    const foreignConfig = await createConfig(t, CONFIG_BODY, other.apiToken);
    for (const id of [foreignConfig, 'cc_01jabcdefghjkmnpqrstvwxyz0']) {
      const res = await create({ compute_config_id: id, server_type: 'cx22' });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(firstError(res.json()).path, ['body', 'compute_config_id']);
    }
    const missing = await create({});
    assert.deepEqual(
      missing.json().errors.map((e: { path: string[] }) => e.path),
      [
        ['body', 'compute_config_id'],
        ['body', 'server_type'],
      ],
    );
    for (const hostname of ['-web', 'web_1', 'a..b', '', 'x'.repeat(64)]) {
      const res = await create({ compute_config_id: configId, server_type: 'cx22', hostname });
      assert.equal(res.statusCode, 422, hostname);
      assert.deepEqual(firstError(res.json()).path, ['body', 'hostname']);
    }
    assert.deepEqual(firstError((await create({ compute_config_id: configId, server_type: 'cx22', ram: 4 })).json()).path, ['body', 'ram']);
  });

  test('the provider failing while the job creates the server: retried, then running', async () => {
    await t.h.app.jobs.runDue(); // earlier tests' machines, so the faults below meet this one
    t.stub.fail({ method: 'POST', path: /^\/servers$/, status: 503, code: 'unavailable', times: 2 });
    const m = (await create({ compute_config_id: configId, server_type: 'cx32' })).json();
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'creating');
    assert.equal((await getOperation(t, m.operation_id)).done, false);
    for (let i = 0; i < 2; i++) {
      t.h.clock.advanceSeconds(10);
      await t.h.app.jobs.runDue();
    }
    assert.equal((await getMachine(t, m.id)).status, 'running');
    assert.equal(t.stub.project(PLATFORM_TOKEN).servers.size > 0, true);
  });

  test("the provider's rate limit during the job is honoured: nothing is sent before Retry-After", async () => {
    t.stub.fail({ method: 'POST', path: /^\/servers$/, status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '120' } });
    const m = (await create({ compute_config_id: configId, server_type: 'cx22' })).json();
    await t.h.app.jobs.runDue();
    const sent = t.stub.requests.length;
    t.h.clock.advanceSeconds(5);
    await t.h.app.jobs.runDue();
    assert.equal(t.stub.requests.length, sent, 'the retry waited for the provider');
    assert.equal((await getMachine(t, m.id)).status, 'creating');
    t.h.clock.advanceSeconds(400);
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'running');
  });

  test('the provider refusing the request: the machine fails, the operation says why (7405), no server is left', async () => {
    t.stub.fail({ method: 'POST', path: /^\/servers$/, status: 403, code: 'resource_limit_exceeded', message: 'server limit reached' });
    const before = t.stub.project(PLATFORM_TOKEN).servers.size;
    const m = (await create({ compute_config_id: configId, server_type: 'cx22' })).json();
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'failed');
    const op = await getOperation(t, m.operation_id);
    assert.equal(op.done, true);
    assert.equal(op.error.code, 7405);
    assert.match(op.error.message, /server limit reached/);
    assert.equal(t.stub.project(PLATFORM_TOKEN).servers.size, before);
  });

  test('the create action ending in error: the machine fails (7406) and the server is gone', async () => {
    t.stub.failAction('create_server');
    const m = (await create({ compute_config_id: configId, server_type: 'cx22' })).json();
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'failed');
    assert.equal((await getOperation(t, m.operation_id)).error.code, 7406);
    const servers = [...t.stub.project(PLATFORM_TOKEN).servers.values()].filter((s) => s.labels['wsp-machine'] === m.id.slice(4));
    assert.deepEqual(servers, []);
  });

  test('a provider down for every attempt: the job gives up (7404) and the machine fails once the provider confirms no server was left', async () => {
    t.stub.fail({ path: /^\/servers$/, status: 502, code: 'server_error', times: 1000 });
    const m = (await create({ compute_config_id: configId, server_type: 'cx22' })).json();
    for (let i = 0; i < 26; i++) {
      await t.h.app.jobs.runDue();
      t.h.clock.advanceSeconds(400);
    }
    assert.equal((await getMachine(t, m.id)).status, 'creating', 'the provider cannot say yet whether a server was made');
    t.stub.clearFaults();
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'failed');
    const op = await getOperation(t, m.operation_id);
    assert.equal(op.error.code, 7404);
    assert.match(op.error.message, /Gave up after 25 attempts/);
  });
});

describe('GET /v1/machines and configs in use', () => {
  test("lists newest first with paging; another workspace's machine is 404 (7002)", async () => {
    const fresh = await t.h.seed('Lister');
    const cfg = await createConfig(t, CONFIG_BODY, fresh.apiToken);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ compute_config_id: cfg, server_type: 'cx22' }, fresh.apiToken)).json().id);
    const page = (await t.h.app.inject({ method: 'GET', url: '/v1/machines?limit=2', headers: as(fresh.apiToken) })).json();
    assert.deepEqual(
      page.data.map((m: { id: string }) => m.id),
      [ids[2], ids[1]],
    );
    const rest = (await t.h.app.inject({ method: 'GET', url: `/v1/machines?cursor=${page.next_cursor}`, headers: as(fresh.apiToken) })).json();
    assert.deepEqual(
      rest.data.map((m: { id: string }) => m.id),
      [ids[0]],
    );
    const foreign = await t.h.app.inject({ method: 'GET', url: `/v1/machines/${ids[0]}`, headers: as(t.s.apiToken) });
    assert.equal(foreign.statusCode, 404);
    assert.equal(firstError(foreign.json()).code, 7002);
    const bare = await t.h.app.inject({ method: 'GET', url: `/v1/machines/${ids[0]!.slice(4)}`, headers: as(fresh.apiToken) });
    assert.equal(bare.statusCode, 200);
    assert.equal(bare.headers.etag, `"${bare.json().etag}"`);
  });

  test('a config used by a machine cannot be deleted (409, 7400); once its machines failed it can', async () => {
    const cfg = await createConfig(t);
    const m = await runningMachine(t);
    const used = (await getMachine(t, m.id)).compute_config_id;
    const { etag } = (await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs/${used}`, headers: as(t.s.apiToken) })).json();
    const res = await t.h.app.inject({ method: 'DELETE', url: `/v1/compute/configs/${used}`, headers: as(t.s.apiToken, undefined, { 'if-match': etag }) });
    assert.equal(res.statusCode, 409);
    assert.equal(firstError(res.json()).code, 7400);

    t.stub.fail({ method: 'POST', path: /^\/servers$/, status: 422, code: 'invalid_input' });
    const failed = (await create({ compute_config_id: cfg, server_type: 'cx22' })).json();
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, failed.id)).status, 'failed');
    const deleteConfig = () => t.h.app.inject({ method: 'DELETE', url: `/v1/compute/configs/${cfg}`, headers: as(t.s.apiToken, undefined, { 'if-match': '*' }) });
    // A failed machine whose server or snapshot the provider still held would still need the account.
    for (const held of [{ provider_server_id: 5_000_000_777 }, { snapshot_id: 5_000_000_778 }]) {
      await t.h.database.db.updateTable('machines').set(held).where('id', '=', failed.id).execute();
      const refused = await deleteConfig();
      assert.equal(refused.statusCode, 409, JSON.stringify(held));
      assert.equal(firstError(refused.json()).code, 7400);
      await t.h.database.db.updateTable('machines').set({ provider_server_id: null, snapshot_id: null }).where('id', '=', failed.id).execute();
    }
    assert.equal((await deleteConfig()).statusCode, 204);
  });
});
