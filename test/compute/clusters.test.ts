import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useComputeTestApp, CONFIG_BODY, createConfig, getMachine, PLATFORM_TOKEN } from './setup.js';

/**
 * docs/spec-gaps.md, "Clusters and regions": GET /v1/regions, clusters as a
 * resource with their derived status, machines and installs placed on them, and the races between
 * placing and deleting. Each rule runs on SQLite and PostgreSQL (the runner runs every file on both).
 */
const t = useComputeTestApp();

type Inject = Awaited<ReturnType<typeof t.h.app.inject>>;
const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, extra: Record<string, string> = {}, credential = t.s.apiToken, workspace?: string): Promise<Inject> =>
  t.h.app.inject({ method, url, headers: as(credential, workspace, extra), ...(payload === undefined ? {} : { payload: payload as object }) });

let n = 0;
const unique = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 6)}`;

async function createCluster(region = 'nbg1', name = unique('c')) {
  const res = await call('POST', '/v1/clusters', { name, region });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}
const getCluster = async (id: string) => (await call('GET', `/v1/clusters/${id}`)).json();
const createMachine = (body: Record<string, unknown>) => call('POST', '/v1/machines', { server_type: 'cx22', ...body });

const NBG1 = { ...CONFIG_BODY, name: 'nbg', region: 'nbg1' };

describe('GET /v1/regions', () => {
  test("the provider's locations with the server types offered in each; one page", async () => {
    const res = await call('GET', '/v1/regions');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.has_more, false);
    assert.equal(body.next_cursor, null);
    assert.deepEqual(
      body.data.map((r: { id: string }) => r.id),
      ['fsn1', 'nbg1', 'hel1', 'ash'],
    );
    const ash = body.data.find((r: { id: string }) => r.id === 'ash');
    // The stub offers cpx11 and cpx21 in ash only; deprecated cx11 nowhere.
    assert.deepEqual(ash, { id: 'ash', name: 'ASH DC Park 1', country: 'US', city: 'ash', network_zone: 'us-east', server_types: ['cpx11', 'cpx21'] });
    const fsn1 = body.data.find((r: { id: string }) => r.id === 'fsn1');
    assert.deepEqual(fsn1.server_types, ['cx22', 'cx32', 'cpx11', 'cpx21', 'cax11']);
  });

  test('GET /v1/regions/{id}; an unknown location is 404 (7002)', async () => {
    const res = await call('GET', '/v1/regions/hel1');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().country, 'DE');
    const missing = await call('GET', '/v1/regions/mars1');
    assert.equal(missing.statusCode, 404);
    assert.equal(firstError(missing.json()).code, 7002);
  });

  test("kept as the catalog is: one provider read serves both, asked again after the catalog's 60 s", async () => {
    t.h.clock.advanceSeconds(120);
    const before = t.stub.requestsTo('GET', /^\/locations/).length;
    assert.equal((await call('GET', '/v1/compute/catalog')).statusCode, 200);
    assert.equal((await call('GET', '/v1/regions')).statusCode, 200);
    assert.equal((await call('GET', '/v1/regions/fsn1')).statusCode, 200);
    assert.equal(t.stub.requestsTo('GET', /^\/locations/).length, before + 1, 'the regions came from the read the catalog made');
    t.h.clock.advanceSeconds(61);
    assert.equal((await call('GET', '/v1/regions')).statusCode, 200);
    assert.equal(t.stub.requestsTo('GET', /^\/locations/).length, before + 2);
  });

  test('a provider that cannot answer: 503 with Retry-After, nothing kept', async () => {
    t.h.clock.advanceSeconds(120);
    t.stub.fail({ path: /^\/locations/, status: 503, code: 'unavailable', times: 10 });
    const res = await call('GET', '/v1/regions');
    assert.equal(res.statusCode, 503);
    assert.ok(res.headers['retry-after']);
    t.stub.clearFaults();
    assert.equal((await call('GET', '/v1/regions')).statusCode, 200);
  });
});

describe('POST /v1/clusters', () => {
  test('201 with the cluster: empty, no machines, not the default; ETag header', async () => {
    const res = await call('POST', '/v1/clusters', { name: 'eu-prod', region: 'nbg1', description: 'Production, Nuremberg' });
    assert.equal(res.statusCode, 201, res.body);
    const c = res.json();
    assert.match(c.id, /^cl_[0-9a-z]{26}$/);
    assert.equal(res.headers.etag, `"${c.etag}"`);
    assert.deepEqual(
      { ...c, id: undefined, etag: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        workspace_id: t.s.workspaceId,
        name: 'eu-prod',
        description: 'Production, Nuremberg',
        region: 'nbg1',
        status: 'empty',
        machine_counts: { creating: 0, running: 0, suspending: 0, suspended: 0, resuming: 0, deleting: 0, failed: 0, expired: 0, total: 0 },
        is_default: false,
        etag: undefined,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    const events = (await call('GET', `/v1/audit_events?resource_id=${c.id}`)).json().data;
    assert.deepEqual(
      events.map((e: { type: string; data: unknown }) => [e.type, e.data]),
      [['cluster.created', { name: 'eu-prod', region: 'nbg1' }]],
    );
  });

  test('name rules (422 at body.name), unknown region (422 naming the regions), the name taken (409, 7410), `default` held', async () => {
    for (const name of ['', 'Prod', 'a_b', 'x'.repeat(64), 'eu prod']) {
      const res = await call('POST', '/v1/clusters', { name, region: 'nbg1' });
      assert.equal(res.statusCode, 422, name);
      assert.deepEqual(firstError(res.json()).path, ['body', 'name']);
    }
    const region = await call('POST', '/v1/clusters', { name: unique('r'), region: 'mars1' });
    assert.equal(region.statusCode, 422);
    assert.deepEqual(firstError(region.json()).path, ['body', 'region']);
    assert.match(firstError(region.json()).message, /fsn1, nbg1, hel1, ash/);
    const name = unique('dup');
    await createCluster('nbg1', name);
    const again = await call('POST', '/v1/clusters', { name, region: 'fsn1' });
    assert.equal(again.statusCode, 409);
    assert.equal(firstError(again.json()).code, 7410);
    assert.deepEqual(firstError(again.json()).path, ['body', 'name']);
    const dflt = await call('POST', '/v1/clusters', { name: 'default', region: 'fsn1' });
    assert.equal(dflt.statusCode, 409);
    assert.equal(firstError(dflt.json()).code, 7410);
    // Another workspace may use the name.
    const other = await t.h.seed('Other');
    assert.equal((await call('POST', '/v1/clusters', { name, region: 'nbg1' }, {}, other.apiToken)).statusCode, 201);
  });

  test('two creates with one name at once: one 201, one 409', async () => {
    for (let round = 0; round < 3; round++) {
      const name = unique('race');
      const both = await Promise.all([0, 1].map(() => call('POST', '/v1/clusters', { name, region: 'nbg1' })));
      assert.deepEqual(both.map((r) => r.statusCode).sort(), [201, 409], both.map((r) => r.body).join('\n'));
      assert.equal(firstError(both.find((r) => r.statusCode === 409)!.json()).code, 7410);
    }
  });

  test('a viewer cannot create; a member can', async () => {
    const viewer = await t.h.admin.createUser({ name: 'viewer' });
    await t.h.admin.addMember(t.s.workspaceId, viewer.user_id, 'viewer');
    const session = (await t.h.admin.createSession(viewer.user_id)).session_token;
    assert.equal((await call('POST', '/v1/clusters', { name: unique('v'), region: 'nbg1' }, {}, session, t.s.workspaceId)).statusCode, 403);
    assert.equal((await call('POST', '/v1/clusters', { name: unique('m'), region: 'nbg1' }, {}, t.s.member.session, t.s.workspaceId)).statusCode, 201);
  });
});

describe('GET and PATCH /v1/clusters', () => {
  test('list newest first in pages; get by canonical or bare id; another workspace’s is 404', async () => {
    const a = await createCluster();
    const b = await createCluster();
    const page = (await call('GET', '/v1/clusters?limit=1')).json();
    assert.equal(page.data[0].id, b.id);
    assert.equal(page.has_more, true);
    const next = (await call('GET', `/v1/clusters?limit=1&cursor=${page.next_cursor}`)).json();
    assert.equal(next.data[0].id, a.id);
    assert.equal((await call('GET', `/v1/clusters/${a.id.slice(3)}`)).json().id, a.id);
    const other = await t.h.seed('Elsewhere');
    assert.equal((await call('GET', `/v1/clusters/${a.id}`, undefined, {}, other.apiToken)).statusCode, 404);
  });

  test('PATCH: If-Match required (422) and checked (409); renames; a PATCH changing nothing keeps the etag; a taken name is 409', async () => {
    const c = await createCluster();
    const missing = await call('PATCH', `/v1/clusters/${c.id}`, { name: unique('x') });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(firstError(missing.json()).path, ['headers', 'if-match']);
    const stale = await call('PATCH', `/v1/clusters/${c.id}`, { name: unique('x') }, { 'if-match': '"nope"' });
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).metadata?.current_etag, c.etag);
    const newName = unique('renamed');
    const renamed = await call('PATCH', `/v1/clusters/${c.id}`, { name: newName, description: 'now described' }, { 'if-match': `"${c.etag}"` });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().name, newName);
    assert.equal(renamed.json().description, 'now described');
    assert.notEqual(renamed.json().etag, c.etag);
    assert.equal(renamed.headers.etag, `"${renamed.json().etag}"`);
    const same = await call('PATCH', `/v1/clusters/${c.id}`, { name: newName }, { 'if-match': renamed.json().etag });
    assert.equal(same.json().etag, renamed.json().etag);
    const other = await createCluster();
    const taken = await call('PATCH', `/v1/clusters/${other.id}`, { name: newName }, { 'if-match': other.etag });
    assert.equal(taken.statusCode, 409);
    assert.equal(firstError(taken.json()).code, 7410);
    const types = (await call('GET', `/v1/audit_events?resource_id=${c.id}`)).json().data.map((e: { type: string }) => e.type);
    assert.deepEqual(types, ['cluster.updated', 'cluster.created']);
  });
});

describe('machines in clusters', () => {
  test('a config of another region is 422 at body.cluster_id and nothing reaches the provider; the default cluster takes any region', async () => {
    const cluster = await createCluster('nbg1');
    const fsn1 = await createConfig(t, { ...CONFIG_BODY, name: unique('fsn') });
    const posts = t.stub.requestsTo('POST', /^\/servers$/).length;
    const refused = await createMachine({ compute_config_id: fsn1, cluster_id: cluster.id });
    assert.equal(refused.statusCode, 422);
    assert.deepEqual(firstError(refused.json()).path, ['body', 'cluster_id']);
    assert.match(firstError(refused.json()).message, /nbg1/);
    await t.h.app.jobs.runDue();
    assert.equal(t.stub.requestsTo('POST', /^\/servers$/).length, posts);
    const unknown = await createMachine({ compute_config_id: fsn1, cluster_id: 'cl_01jdzk3q8f4n6w2m5t7v9x1c3b' });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(firstError(unknown.json()).path, ['body', 'cluster_id']);
    const intoDefault = await createMachine({ compute_config_id: fsn1 });
    assert.equal(intoDefault.statusCode, 201);
    const dflt = await getCluster(intoDefault.json().cluster_id);
    assert.equal(dflt.is_default, true);
    assert.equal(dflt.region, null);
    assert.equal(dflt.name, 'default');
    const nbg = await createConfig(t, { ...NBG1, name: unique('nbg') });
    assert.equal((await createMachine({ compute_config_id: nbg, cluster_id: dflt.id })).statusCode, 201);
  });

  test('a server type not offered in the config’s region: 422 naming the offered ones, before anything reaches the provider', async () => {
    const ash = await createConfig(t, { ...CONFIG_BODY, name: unique('ash'), region: 'ash', machine_type_filter: '*' });
    const posts = t.stub.requestsTo('POST', /^\/servers$/).length;
    const res = await createMachine({ compute_config_id: ash, server_type: 'cx22' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['body', 'server_type']);
    assert.match(firstError(res.json()).message, /not offered in the config's region ash; this config can use: cpx11, cpx21/);
    assert.equal(t.stub.requestsTo('POST', /^\/servers$/).length, posts);
  });

  test('status derived from the machines: provisioning, ready, degraded as soon as one failed; machine_counts; ?cluster_id= lists only its machines', async () => {
    const cluster = await createCluster('nbg1');
    const nbg = await createConfig(t, { ...NBG1, name: unique('nbg') });
    const first = await createMachine({ compute_config_id: nbg, cluster_id: cluster.id.slice(3) });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().cluster_id, cluster.id);
    let c = await getCluster(cluster.id);
    assert.equal(c.status, 'provisioning');
    assert.equal(c.machine_counts.creating, 1);
    await t.h.app.jobs.runDue();
    c = await getCluster(cluster.id);
    assert.equal(c.status, 'ready');
    assert.deepEqual([c.machine_counts.running, c.machine_counts.total], [1, 1]);
    t.stub.failAction('create_server');
    const second = (await createMachine({ compute_config_id: nbg, cluster_id: cluster.id })).json();
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, second.id)).status, 'failed');
    c = await getCluster(cluster.id);
    assert.equal(c.status, 'degraded');
    assert.deepEqual([c.machine_counts.running, c.machine_counts.failed, c.machine_counts.total], [1, 1, 2]);
    // The list shows the same derived status.
    const listed = (await call('GET', '/v1/clusters?limit=100')).json().data.find((x: { id: string }) => x.id === cluster.id);
    assert.equal(listed.status, 'degraded');

    const mine = (await call('GET', `/v1/machines?cluster_id=${cluster.id}`)).json();
    assert.deepEqual(mine.data.map((m: { id: string }) => m.id).sort(), [first.json().id, second.id].sort());
    const page = (await call('GET', `/v1/machines?cluster_id=${cluster.id}&limit=1`)).json();
    assert.equal(page.has_more, true);
    const crossed = await call('GET', `/v1/machines?limit=1&cursor=${page.next_cursor}`);
    assert.equal(crossed.statusCode, 422, 'a cursor of one cluster’s list does not continue the whole list');
    assert.deepEqual((await call('GET', '/v1/machines?cluster_id=cl_01jdzk3q8f4n6w2m5t7v9x1c3b')).json().data, []);
  });
});

describe('DELETE /v1/clusters/{id}', () => {
  test('204 for an empty cluster (event recorded); 409 (7412) naming its machines and installs while it holds them; 204 once emptied', async () => {
    const empty = await createCluster();
    assert.equal((await call('DELETE', `/v1/clusters/${empty.id}`)).statusCode, 422, 'If-Match is required');
    const gone = await call('DELETE', `/v1/clusters/${empty.id}`, undefined, { 'if-match': `"${empty.etag}"` });
    assert.equal(gone.statusCode, 204);
    assert.equal((await call('GET', `/v1/clusters/${empty.id}`)).statusCode, 404);
    assert.ok((await call('GET', `/v1/audit_events?type=cluster.deleted&resource_id=${empty.id}`)).json().data.length === 1);

    const cluster = await createCluster('nbg1');
    const nbg = await createConfig(t, { ...NBG1, name: unique('nbg') });
    const m = (await createMachine({ compute_config_id: nbg, cluster_id: cluster.id })).json();
    await t.h.app.jobs.runDue();
    const pkg = (await call('POST', '/v1/packages', { name: unique('pkg') })).json();
    const v = (await call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': 'a' } })).json();
    const install = await call('POST', '/v1/installs', { name: unique('inst'), package_id: pkg.id, version_id: v.id, cluster_id: cluster.id });
    assert.equal(install.statusCode, 201, install.body);
    assert.equal(install.json().cluster_id, cluster.id);

    const held = await call('DELETE', `/v1/clusters/${cluster.id}`, undefined, { 'if-match': '*' });
    assert.equal(held.statusCode, 409);
    const err = firstError(held.json());
    assert.equal(err.code, 7412);
    assert.deepEqual(err.metadata, { machine_ids: m.id, install_ids: install.json().id, machine_count: '1', install_count: '1' });
    assert.match(err.message, new RegExp(m.id));

    // Emptied: the install moved off (PATCH cluster_id null), the machine deleted.
    const moved = await call('PATCH', `/v1/installs/${install.json().id}`, { cluster_id: null }, { 'if-match': install.json().etag });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().cluster_id, null);
    const machine = await getMachine(t, m.id);
    assert.equal((await call('DELETE', `/v1/machines/${m.id}`, undefined, { 'if-match': machine.etag })).statusCode, 202);
    const whileDeleting = await call('DELETE', `/v1/clusters/${cluster.id}`, undefined, { 'if-match': '*' });
    assert.equal(whileDeleting.statusCode, 409, 'a machine being deleted still holds it');
    await t.h.app.jobs.runDue();
    const stale = await call('DELETE', `/v1/clusters/${cluster.id}`, undefined, { 'if-match': '"stale"' });
    assert.equal(stale.statusCode, 409);
    assert.equal(firstError(stale.json()).code, 7030);
    assert.equal((await call('DELETE', `/v1/clusters/${cluster.id}`, undefined, { 'if-match': (await getCluster(cluster.id)).etag })).statusCode, 204);
  });

  test('the default cluster: 409 (7411) on delete and on rename; its description may change', async () => {
    const cfg = await createConfig(t, { ...CONFIG_BODY, name: unique('d') });
    const dfltId = (await createMachine({ compute_config_id: cfg })).json().cluster_id;
    const dflt = await getCluster(dfltId);
    const del = await call('DELETE', `/v1/clusters/${dfltId}`, undefined, { 'if-match': dflt.etag });
    assert.equal(del.statusCode, 409);
    assert.equal(firstError(del.json()).code, 7411);
    const rename = await call('PATCH', `/v1/clusters/${dfltId}`, { name: 'main' }, { 'if-match': dflt.etag });
    assert.equal(firstError(rename.json()).code, 7411);
    const described = await call('PATCH', `/v1/clusters/${dfltId}`, { description: 'where machines go by default' }, { 'if-match': dflt.etag });
    assert.equal(described.statusCode, 200);
    assert.equal(described.json().description, 'where machines go by default');
  });

  test('owners and admins only (403 for a member), with compute:write for a token', async () => {
    const c = await createCluster();
    const member = await call('DELETE', `/v1/clusters/${c.id}`, undefined, { 'if-match': '*' }, t.s.member.session, t.s.workspaceId);
    assert.equal(member.statusCode, 403);
    const made = await call('POST', '/v1/api_tokens', { name: unique('reader'), scopes: ['compute:read'] }, {}, t.s.owner.session, t.s.workspaceId);
    assert.equal(made.statusCode, 201, made.body);
    const reader = made.json();
    const scoped = await call('DELETE', `/v1/clusters/${c.id}`, undefined, { 'if-match': '*' }, reader.token);
    assert.equal(scoped.statusCode, 403);
    assert.equal(firstError(scoped.json()).metadata?.required_scope, 'compute:write');
    assert.equal((await call('DELETE', `/v1/clusters/${c.id}`, undefined, { 'if-match': '*' }, t.s.admin.session, t.s.workspaceId)).statusCode, 204);
  });

  test('a delete racing a machine created in the cluster: one of the two fails cleanly, and no server is left for a machine without a cluster', async () => {
    const nbg = await createConfig(t, { ...NBG1, name: unique('nbg') });
    const outcomes = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const cluster = await createCluster('nbg1');
      const [machine, deleted] = await Promise.all([createMachine({ compute_config_id: nbg, cluster_id: cluster.id }), call('DELETE', `/v1/clusters/${cluster.id}`, undefined, { 'if-match': '*' })]);
      const outcome = `${machine.statusCode}/${deleted.statusCode}`;
      outcomes.add(outcome);
      assert.ok(['201/409', '404/204'].includes(outcome), `${outcome}: ${machine.body} ${deleted.body}`);
      await t.h.app.jobs.runDue();
      if (machine.statusCode === 201) {
        assert.equal(firstError(deleted.json()).metadata?.machine_ids, machine.json().id);
        assert.equal((await getMachine(t, machine.json().id)).cluster_id, cluster.id);
        assert.equal((await getCluster(cluster.id)).machine_counts.total, 1);
      } else {
        assert.deepEqual(firstError(machine.json()).path, ['body', 'cluster_id']);
      }
    }
    // Every server at the provider belongs to a machine that exists, in a cluster that exists.
    const listed = new Map<string, { cluster_id: string }>();
    let cursor: string | null = null;
    do {
      const res: { data: { id: string; cluster_id: string }[]; next_cursor: string | null } = (await call('GET', `/v1/machines?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json();
      for (const m of res.data) listed.set(m.id.slice(4), m);
      cursor = res.next_cursor;
    } while (cursor);
    for (const server of t.stub.project(PLATFORM_TOKEN).servers.values()) {
      const m = listed.get(server.labels['wsp-machine']!);
      assert.ok(m, `server ${server.name} has no machine`);
      assert.equal((await call('GET', `/v1/clusters/${m.cluster_id}`)).statusCode, 200);
    }
    t.h.app.log.info({ outcomes: [...outcomes] }, 'delete/create race outcomes');
  });
});

describe('installs on clusters', () => {
  test('cluster_id on create and PATCH (If-Match); unknown is 404 at body.cluster_id; ?cluster_id= filters; changing only the cluster queues no render', async () => {
    const cluster = await createCluster('fsn1');
    const pkg = (await call('POST', '/v1/packages', { name: unique('pkg') })).json();
    const v = (await call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': 'a' } })).json();
    const unknown = await call('POST', '/v1/installs', { name: unique('i'), package_id: pkg.id, version_id: v.id, cluster_id: 'cl_01jdzk3q8f4n6w2m5t7v9x1c3b' });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(firstError(unknown.json()).path, ['body', 'cluster_id']);
    const plain = (await call('POST', '/v1/installs', { name: unique('i'), package_id: pkg.id, version_id: v.id })).json();
    assert.equal(plain.cluster_id, null);
    const placed = (await call('POST', '/v1/installs', { name: unique('i'), package_id: pkg.id, version_id: v.id, cluster_id: cluster.id.slice(3) })).json();
    assert.equal(placed.cluster_id, cluster.id);
    const listed = (await call('GET', `/v1/installs?cluster_id=${cluster.id}`)).json();
    assert.deepEqual(
      listed.data.map((i: { id: string }) => i.id),
      [placed.id],
    );
    const badPatch = await call('PATCH', `/v1/installs/${plain.id}`, { cluster_id: 'cl_01jdzk3q8f4n6w2m5t7v9x1c3b' }, { 'if-match': plain.etag });
    assert.equal(badPatch.statusCode, 404);
    assert.deepEqual(firstError(badPatch.json()).path, ['body', 'cluster_id']);
    const noIfMatch = await call('PATCH', `/v1/installs/${plain.id}`, { cluster_id: cluster.id });
    assert.equal(noIfMatch.statusCode, 422);
    const rendersBefore = (await call('GET', `/v1/installs/${plain.id}/renders`)).json().data.length;
    const moved = await call('PATCH', `/v1/installs/${plain.id}`, { cluster_id: cluster.id }, { 'if-match': plain.etag });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().cluster_id, cluster.id);
    assert.notEqual(moved.json().etag, plain.etag);
    assert.equal((await call('GET', `/v1/installs/${plain.id}/renders`)).json().data.length, rendersBefore);
    const ev = (await call('GET', `/v1/audit_events?type=install.updated&resource_id=${plain.id}`)).json().data[0];
    assert.equal(ev.data.cluster_id, cluster.id);
    assert.deepEqual(
      (await call('GET', `/v1/installs?cluster_id=${cluster.id}`)).json().data.map((i: { id: string }) => i.id),
      [placed.id, plain.id],
    );
  });

  test('a delete racing an install placed on the cluster: one of the two fails cleanly', async () => {
    const pkg = (await call('POST', '/v1/packages', { name: unique('pkg') })).json();
    const v = (await call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': 'a' } })).json();
    for (let round = 0; round < 4; round++) {
      const cluster = await createCluster('fsn1');
      const [install, deleted] = await Promise.all([
        call('POST', '/v1/installs', { name: unique('i'), package_id: pkg.id, version_id: v.id, cluster_id: cluster.id }),
        call('DELETE', `/v1/clusters/${cluster.id}`, undefined, { 'if-match': '*' }),
      ]);
      const outcome = `${install.statusCode}/${deleted.statusCode}`;
      assert.ok(['201/409', '404/204'].includes(outcome), `${outcome}: ${install.body} ${deleted.body}`);
    }
  });
});

describe('dashboards and platform metrics', () => {
  const dashboard = (filters: unknown[], defaults: Record<string, unknown> = {}) => ({
    name: unique('d'),
    purpose: 'custom',
    filter_definitions: filters,
    default_filter_values: defaults,
    widgets: [],
  });

  test('a cluster or region variable whose default names nothing the workspace has is 422 at its path; real ids are taken', async () => {
    const cluster = await createCluster('hel1');
    const clusterVar = (d: unknown) => ({ kind: 'variable', key: 'var.cl', input: { kind: 'resource', key: 'cl', label: 'Cluster', resource: 'cluster', default: d } });
    const regionVar = (d: unknown) => ({ kind: 'variable', key: 'var.rg', input: { kind: 'resource', key: 'rg', label: 'Region', resource: 'region', default: d } });
    const bad = await call('POST', '/v1/dashboards', dashboard([clusterVar('cl_01jdzk3q8f4n6w2m5t7v9x1c3b'), regionVar(['fsn1', 'mars1'])]));
    assert.equal(bad.statusCode, 422, bad.body);
    assert.deepEqual(
      bad.json().errors.map((e: { path: string[] }) => e.path),
      [
        ['body', 'filter_definitions', '0', 'input', 'default'],
        ['body', 'filter_definitions', '1', 'input', 'default', '1'],
      ],
    );
    const good = await call('POST', '/v1/dashboards', dashboard([clusterVar(cluster.id), regionVar(['fsn1', 'hel1'])]));
    assert.equal(good.statusCode, 201, good.body);
    // A resource filter's default value is checked the same way, on PATCH too.
    const withFilter = (await call('POST', '/v1/dashboards', dashboard([{ kind: 'resource', key: 'cluster', resource: 'cluster', label: 'Cluster' }], { cluster: cluster.id }))).json();
    const patched = await call('PATCH', `/v1/dashboards/${withFilter.id}`, { default_filter_values: { cluster: 'cl_01jdzk3q8f4n6w2m5t7v9x1c3b' } }, { 'if-match': withFilter.etag });
    assert.equal(patched.statusCode, 422);
    assert.deepEqual(firstError(patched.json()).path, ['body', 'default_filter_values', 'cluster']);
    // Another workspace's cluster is nothing this one has.
    const other = await t.h.seed('Third');
    const foreign = await call('POST', '/v1/dashboards', dashboard([clusterVar(cluster.id)]), {}, other.apiToken);
    assert.equal(foreign.statusCode, 422);
  });

  test('machines_running narrowed by cluster and by region counts only those machines', async () => {
    const ws = await t.h.seed('Metrics');
    const as2 = (method: 'GET' | 'POST', url: string, payload?: unknown) => call(method, url, payload, {}, ws.apiToken);
    const cluster = (await as2('POST', '/v1/clusters', { name: 'hel', region: 'hel1' })).json();
    const hel = (await as2('POST', '/v1/compute/configs', { ...CONFIG_BODY, name: 'hel', region: 'hel1' })).json().id;
    const fsn = (await as2('POST', '/v1/compute/configs', { ...CONFIG_BODY, name: 'fsn' })).json().id;
    const start = Math.floor(t.h.clock.nowMs() / 1000);
    for (const body of [{ compute_config_id: hel, cluster_id: cluster.id }, { compute_config_id: hel, cluster_id: cluster.id }, { compute_config_id: hel }, { compute_config_id: fsn }]) {
      assert.equal((await as2('POST', '/v1/machines', { server_type: 'cx22', ...body })).statusCode, 201);
    }
    await t.h.app.jobs.runDue();
    t.h.clock.advanceSeconds(120);
    const last = async (query: string) => {
      const res = await as2('GET', `/v1/platform_metrics/machines_running/series?from=${start - 60}&to=${start + 120}&step=60${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().points.at(-1)[1];
    };
    assert.equal(await last(''), 4);
    assert.equal(await last(`&cluster=${cluster.id}`), 2);
    assert.equal(await last('&region=hel1'), 3);
    assert.equal(await last('&region=fsn1'), 1);
    assert.equal(await last(`&cluster=${cluster.id}&region=fsn1`), 0);
    const cost = await as2('GET', `/v1/platform_metrics/monthly_cost_cents/series?region=hel1`);
    assert.equal(cost.statusCode, 200);
    const catalog = (await as2('GET', '/v1/platform_metrics')).json().data.find((m: { key: string }) => m.key === 'machines_running');
    assert.deepEqual(catalog.filter_keys, ['cluster', 'region']);
  });
});
