import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, api, startServer, type ServerProcess } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { ProviderStub } from './provider-stub.js';
import { metricWidget } from '../dashboards/fixtures.js';

/**
 * Issue 52's "done when", with real processes: `wsp admin bootstrap`, then `wsp serve` whose
 * Hetzner adapter talks HTTP to the stub of the provider's API (test/compute/provider-stub.ts),
 * which this test holds, releases and fails. The regions; a cluster in nbg1 that refuses a
 * machine of an fsn1 config at `body.cluster_id`; a machine of an nbg1 config that makes it
 * `provisioning`, then `ready`; a machine the provider fails, and the cluster `degraded`; an
 * install placed on it; a dashboard whose `cluster` filter narrows its machines_running series
 * to this cluster (another cluster's machine runs and is not counted); the delete refused while
 * it holds anything, naming what, and accepted once it is empty.
 */
const PLATFORM_TOKEN = 'platform-token-of-the-clusters-walkthrough';
let stub: ProviderStub;
let tdb: TestDatabase;
let server: ServerProcess;
let token: string;

before(async () => {
  stub = new ProviderStub([PLATFORM_TOKEN]);
  stub.actionPolls = 0;
  await stub.start();
  tdb = await openTestDatabase();
  token = (await adminJson(['bootstrap'], tdb.env)).api_token!;
  server = await startServer({ ...tdb.env, WSP_MASTER_KEY: randomBytes(32).toString('base64'), WSP_PROVIDER_URL: stub.url, WSP_PROVIDER_TOKEN: PLATFORM_TOKEN });
});
after(async () => {
  await server?.stop('SIGTERM');
  await tdb?.cleanup();
  await stub?.stop();
});

/** Every write carries an Idempotency-Key, so a 503 (a starved database) is retried as the SDK retries it. */
const call = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
  api(server.url, method, url, {
    credential: token,
    headers: method === 'GET' ? headers : { 'idempotency-key': randomUUID(), ...headers },
    ...(body === undefined ? {} : { body }),
  });
async function ok(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await call(method, url, body, headers);
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
  return res.body;
}
const cluster = (id: string) => ok('GET', `/v1/clusters/${id}`);
const machine = (id: string) => ok('GET', `/v1/machines/${id}`);
const machineIs = (id: string, status: string) =>
  waitFor(`machine ${id} to be ${status}`, async () => {
    const m = await machine(id);
    if (status !== 'failed') assert.notEqual(m.status, 'failed', JSON.stringify(m));
    return m.status === status ? m : null;
  });
const createsAtProvider = () => stub.requestsTo('POST', /^\/servers$/).length;
const ids = (csv: string | undefined) => (csv ?? '').split(',').filter(Boolean).sort();

test('regions, a cluster in nbg1, its machines provisioning, ready and degraded, an install on it, a dashboard filtered to it, delete refused then accepted', async () => {
  // The provider's regions, with the server types each offers.
  const regions = (await ok('GET', '/v1/regions')).data as { id: string; server_types: string[] }[];
  assert.deepEqual(
    regions.map((r) => r.id),
    ['fsn1', 'nbg1', 'hel1', 'ash'],
  );
  assert.ok(regions.find((r) => r.id === 'nbg1')!.server_types.includes('cx22'));

  const nbg = await ok('POST', '/v1/clusters', { name: 'eu-nuremberg', region: 'nbg1', description: 'Production' });
  assert.deepEqual([nbg.region, nbg.status, nbg.machine_counts.total, nbg.is_default], ['nbg1', 'empty', 0, false]);
  const config = (name: string, region: string) => ok('POST', '/v1/compute/configs', { name, provider: 'hetzner', region, image: 'ubuntu-24.04', machine_type_filter: 'cx*' });
  const fsn1 = await config('web-fsn1', 'fsn1');
  const nbg1 = await config('web-nbg1', 'nbg1');

  // A config of another region: refused at body.cluster_id before anything reaches the provider.
  const creates = createsAtProvider();
  const refused = await call('POST', '/v1/machines', { compute_config_id: fsn1.id, server_type: 'cx22', cluster_id: nbg.id });
  assert.equal(refused.status, 422, refused.text);
  assert.deepEqual(refused.body.errors[0].path, ['body', 'cluster_id']);
  assert.equal((await ok('GET', `/v1/machines?cluster_id=${nbg.id}`)).data.length, 0);

  // A machine of an nbg1 config. The provider holds its creation until released, so the
  // cluster is seen provisioning whatever the machine's speed; then it runs and the cluster is ready.
  stub.actionPolls = Number.MAX_SAFE_INTEGER;
  const first = await ok('POST', '/v1/machines', { compute_config_id: nbg1.id, server_type: 'cx22', cluster_id: nbg.id, hostname: 'web-1' });
  assert.deepEqual([first.status, first.cluster_id], ['creating', nbg.id]);
  const provisioning = await cluster(nbg.id);
  assert.deepEqual([provisioning.status, provisioning.machine_counts.creating, provisioning.machine_counts.total], ['provisioning', 1, 1]);
  stub.actionPolls = 0;
  stub.finishActions();
  await machineIs(first.id, 'running');
  const ready = await cluster(nbg.id);
  assert.deepEqual([ready.status, ready.machine_counts.running, ready.machine_counts.total], ['ready', 1, 1]);
  assert.equal(createsAtProvider(), creates + 1, 'the refused machine never reached the provider');

  // The provider fails the next machine: the cluster reads degraded at once, not provisioning forever.
  stub.failAction('create_server');
  const second = await ok('POST', '/v1/machines', { compute_config_id: nbg1.id, server_type: 'cx22', cluster_id: nbg.id, hostname: 'web-2' });
  await machineIs(second.id, 'failed');
  const degraded = await cluster(nbg.id);
  assert.deepEqual([degraded.status, degraded.machine_counts.running, degraded.machine_counts.failed, degraded.machine_counts.total], ['degraded', 1, 1, 2]);
  assert.equal((await ok('GET', '/v1/clusters?limit=100')).data.find((c: { id: string }) => c.id === nbg.id).status, 'degraded', 'the list derives it too');

  // Another cluster's machine, running: the dashboard below must not count it.
  const fsn = await ok('POST', '/v1/clusters', { name: 'eu-falkenstein', region: 'fsn1' });
  const elsewhere = await ok('POST', '/v1/machines', { compute_config_id: fsn1.id, server_type: 'cx22', cluster_id: fsn.id, hostname: 'other-1' });
  await machineIs(elsewhere.id, 'running');
  assert.equal((await cluster(fsn.id)).status, 'ready');

  // An install placed on the cluster.
  const pkg = await ok('POST', '/v1/packages', { name: 'web' });
  const version = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'app.txt': 'app {{who}}\n' } });
  const install = await ok('POST', '/v1/installs', { name: 'shop', package_id: pkg.id, version_id: version.id, values: { who: 'world' }, cluster_id: nbg.id });
  assert.equal(install.cluster_id, nbg.id);
  // Its first render lands (and changes the install's etag) before anything below reads the etag.
  const rendered = await waitFor('the install to render', async () => {
    const r = await ok('GET', `/v1/renders/${install.last_render.id}`);
    return ['queued', 'running'].includes(r.state) ? null : r;
  });
  assert.equal(rendered.state, 'succeeded', JSON.stringify(rendered));
  assert.deepEqual(
    (await ok('GET', `/v1/installs?cluster_id=${nbg.id}`)).data.map((i: { id: string }) => i.id),
    [install.id],
  );

  // A dashboard with a cluster filter set to it, and a machines_running widget that inherits it.
  const dashboard = await ok('POST', '/v1/dashboards', {
    name: 'Nuremberg',
    purpose: 'custom',
    filter_definitions: [
      { kind: 'time', key: 'time', label: 'Time range' },
      { kind: 'resource', key: 'cluster', resource: 'cluster', label: 'Cluster' },
    ],
    default_filter_values: { time: { from: -3600, to: 0 }, cluster: nbg.id },
    widgets: [metricWidget({ title: 'Running machines', filter_bindings: { time: { mode: 'inherit', filter_key: 'time' }, cluster: { mode: 'inherit', filter_key: 'cluster' } } })],
  });
  // Drawn as the console draws it (console/src/views/dashboards/widgets.tsx, metricQuery): each
  // binding's value, fixed or inherited from the dashboard's filter values, as the series' query.
  const read = await ok('GET', `/v1/dashboards/${dashboard.id}`);
  const widget = read.widgets[0];
  const draw = async (values: Record<string, unknown>) => {
    const query = new URLSearchParams({ version: String(widget.metric_version) });
    for (const [name, binding] of Object.entries(widget.filter_bindings as Record<string, { mode: string; value?: unknown; filter_key?: string }>)) {
      if (name === 'time') continue;
      const value = binding.mode === 'fixed' ? binding.value : values[binding.filter_key!];
      if (typeof value === 'string' && value !== '') query.set(name, value);
    }
    const now = Math.floor(Date.now() / 1000);
    const time = values.time as { from: number; to: number };
    query.set('from', String(now + time.from));
    query.set('to', String(now + time.to));
    query.set('step', '60');
    const series = await ok('GET', `/v1/platform_metrics/${widget.metric_key}/series?${query}`);
    return series.points.at(-1)[1] as number;
  };
  assert.equal(read.default_filter_values.cluster, nbg.id);
  assert.equal(await draw(read.default_filter_values), 1, "this cluster's running machine only: not the failed one, not the other cluster's");
  assert.equal(await draw({ ...read.default_filter_values, cluster: fsn.id }), 1, "the other cluster's machine, under its own filter");
  assert.equal(await draw({ ...read.default_filter_values, cluster: '' }), 2, 'without the filter, both running machines');

  // Delete: refused while it holds machines (the failed one too) and the install, naming them.
  const held = await call('DELETE', `/v1/clusters/${nbg.id}`, undefined, { 'if-match': (await cluster(nbg.id)).etag });
  assert.equal(held.status, 409, held.text);
  const err = held.body.errors[0];
  assert.equal(err.code, 7412);
  assert.deepEqual(ids(err.metadata.machine_ids), [first.id, second.id].sort());
  assert.deepEqual(ids(err.metadata.install_ids), [install.id]);
  assert.equal((await cluster(nbg.id)).status, 'degraded', 'a refused delete changes nothing');

  // Emptied: the install moved off, both machines deleted (the provider confirms each).
  const moved = await ok('PATCH', `/v1/installs/${install.id}`, { cluster_id: null }, { 'if-match': (await ok('GET', `/v1/installs/${install.id}`)).etag });
  assert.equal(moved.cluster_id, null);
  for (const m of [first, second]) {
    const deleting = await call('DELETE', `/v1/machines/${m.id}`, undefined, { 'if-match': (await machine(m.id)).etag });
    assert.equal(deleting.status, 202, deleting.text);
  }
  for (const m of [first, second]) await waitFor(`machine ${m.id} to be gone`, async () => (await call('GET', `/v1/machines/${m.id}`)).status === 404);
  const empty = await cluster(nbg.id);
  assert.deepEqual([empty.status, empty.machine_counts.total], ['empty', 0]);
  const gone = await call('DELETE', `/v1/clusters/${nbg.id}`, undefined, { 'if-match': empty.etag });
  assert.equal(gone.status, 204, gone.text);
  assert.equal((await call('GET', `/v1/clusters/${nbg.id}`)).status, 404);
  assert.deepEqual(
    (await ok('GET', `/v1/audit_events?resource_id=${nbg.id}`)).data.map((e: { type: string }) => e.type),
    ['cluster.deleted', 'cluster.created'],
  );
  // The other cluster and its machine are untouched.
  assert.equal((await machine(elsewhere.id)).status, 'running');
  assert.equal((await cluster(fsn.id)).status, 'ready');
});
