import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import fs from 'node:fs';
import { repoRoot } from '../../src/config.js';
import { installFixture } from './fixture.js';

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

const FIELDS = [
  'automatic_updates_enabled',
  'cluster_id',
  'created_at',
  'current_version',
  'delivery',
  'desired_version',
  'etag',
  'id',
  'last_render',
  'name',
  'open_change_request_id',
  'package_id',
  'required_approvals',
  'updated_at',
  'values',
  'workspace_id',
];

async function packageWithVersions() {
  const pkg = await f.createPackage();
  const v1 = await f.publish(pkg.id, '1.0.0', { 'a.txt': '{{x}}' });
  const v2 = await f.publish(pkg.id, '2.0.0', { 'a.txt': 'v2 {{x}}' });
  return { pkg, v1, v2 };
}

describe('POST /v1/installs', () => {
  test('201 with the install and its ETag; GET and the list answer the same', async () => {
    const { pkg, v1 } = await packageWithVersions();
    const res = await f.call('POST', '/v1/installs', { name: 'prod', package_id: pkg.id, version_id: v1.id.slice(5), values: { x: 1 }, automatic_updates_enabled: true });
    assert.equal(res.statusCode, 201, res.body);
    const inst = res.json();
    assert.deepEqual(Object.keys(inst).sort(), FIELDS);
    assert.match(inst.id, /^inst_[0-9a-z]{26}$/);
    assert.deepEqual(
      { ...inst, id: 0, etag: 0, created_at: 0, updated_at: 0, last_render: { ...inst.last_render, id: 0 } },
      {
        id: 0,
        workspace_id: s.workspaceId,
        name: 'prod',
        package_id: pkg.id,
        current_version: null,
        desired_version: { id: v1.id, semver: '1.0.0' },
        values: { x: 1 },
        automatic_updates_enabled: true,
        created_at: 0,
        updated_at: 0,
        etag: 0,
        last_render: { id: 0, state: 'queued', error: null },
        delivery: 'direct',
        required_approvals: 0,
        open_change_request_id: null,
        cluster_id: null,
      },
    );
    assert.match(inst.last_render.id, /^rnd_/);
    assert.equal(res.headers.etag, `"${inst.etag}"`);
    const got = await f.call('GET', `/v1/installs/${inst.id}`);
    assert.deepEqual(got.json(), inst);
    assert.equal(got.headers.etag, `"${inst.etag}"`);
    const list = await f.ok('GET', '/v1/installs?limit=1');
    assert.deepEqual(list.data, [inst]);
  });

  test('values default to {} and automatic updates to off', async () => {
    const { pkg, v1 } = await packageWithVersions();
    const inst = await f.createInstall({ package_id: pkg.id, version_id: v1.id });
    assert.deepEqual([inst.values, inst.automatic_updates_enabled], [{}, false]);
  });

  test('an unknown package or version is 404 at its body field; a version of another package is 422 (7303)', async () => {
    const { pkg, v1 } = await packageWithVersions();
    const other = await packageWithVersions();
    const cases: [Record<string, string>, number, number, string][] = [
      [{ package_id: 'pkg_00000000000000000000000000', version_id: v1.id }, 404, 7002, 'package_id'],
      [{ package_id: pkg.id, version_id: 'pkgv_00000000000000000000000000' }, 404, 7002, 'version_id'],
      [{ package_id: pkg.id, version_id: other.v1.id }, 422, 7303, 'version_id'],
    ];
    const before = (await f.ok('GET', '/v1/installs?limit=100')).data.length;
    for (const [ids, status, code, field] of cases) {
      const res = await f.call('POST', '/v1/installs', { name: f.unique('i'), ...ids });
      assert.equal(res.statusCode, status, JSON.stringify(ids));
      assert.deepEqual([firstError(res.json()).code, firstError(res.json()).path], [code, ['body', field]]);
    }
    assert.equal((await f.ok('GET', '/v1/installs?limit=100')).data.length, before, 'nothing was made');
  });

  test("another workspace's package is unknown here", async () => {
    const t = await h.seed('Other');
    const g = installFixture(h, t);
    const theirs = await g.createPackage();
    const theirV = await g.publish(theirs.id, '1.0.0', { a: 'x' });
    const res = await f.call('POST', '/v1/installs', { name: 'x', package_id: theirs.id, version_id: theirV.id });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(firstError(res.json()).path, ['body', 'package_id']);
  });

  test('an install name is unique in the workspace (409 7302) and no repository is left behind', async () => {
    const { pkg, v1 } = await packageWithVersions();
    await f.ok('POST', '/v1/installs', { name: 'taken', package_id: pkg.id, version_id: v1.id });
    const repos = () => fs.readdirSync(repoRoot(h.config)).length;
    const before = repos();
    const dup = await f.call('POST', '/v1/installs', { name: 'taken', package_id: pkg.id, version_id: v1.id });
    assert.equal(dup.statusCode, 409);
    assert.deepEqual([firstError(dup.json()).code, firstError(dup.json()).path], [7302, ['body', 'name']]);
    assert.equal(repos(), before);
  });

  test('bad bodies are 422 at their field', async () => {
    const { pkg, v1 } = await packageWithVersions();
    const good = { name: 'n', package_id: pkg.id, version_id: v1.id };
    for (const [body, path] of [
      [{ ...good, name: '' }, ['body', 'name']],
      [{ ...good, package_id: undefined }, ['body', 'package_id']],
      [{ ...good, version_id: 'v'.repeat(65) }, ['body', 'version_id']],
      [{ ...good, values: [] }, ['body', 'values']],
      [{ ...good, values: 'x' }, ['body', 'values']],
      [{ ...good, automatic_updates_enabled: 'true' }, ['body', 'automatic_updates_enabled']],
      [{ ...good, current_version: 'x' }, ['body', 'current_version']],
    ] as const) {
      const res = await f.call('POST', '/v1/installs', body);
      assert.equal(res.statusCode, 422, JSON.stringify(body));
      assert.deepEqual(firstError(res.json()).path, path);
    }
  });
});

describe('GET /v1/installs/{id}', () => {
  test("another workspace's install and its renders are 404 (7002); an over-long id is 422", async () => {
    const t = await h.seed('Third');
    const g = installFixture(h, t);
    const theirs = await g.installed();
    for (const url of [`/v1/installs/${theirs.install.id}`, `/v1/installs/${theirs.install.id}/renders`]) {
      const res = await f.call('GET', url);
      assert.equal(res.statusCode, 404, url);
      assert.equal(firstError(res.json()).code, 7002);
    }
    const render = (await g.renders(theirs.install.id))[0];
    assert.equal((await f.call('GET', `/v1/renders/${render.id}`)).statusCode, 404);
    const patch = await f.call('PATCH', `/v1/installs/${theirs.install.id}`, { values: {} }, { 'if-match': '*' });
    assert.equal(patch.statusCode, 404);
    const long = await f.call('GET', `/v1/installs/${'x'.repeat(56)}`);
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['path', 'id']);
    assert.equal((await f.call('GET', `/v1/renders/${'x'.repeat(55)}`)).statusCode, 422);
  });

  test('a broad credential needs Service-Context (403); any member may read', async () => {
    const { install } = await f.installed();
    assert.equal((await h.app.inject({ method: 'GET', url: `/v1/installs/${install.id}`, headers: as(s.member.session) })).statusCode, 403);
    assert.equal((await h.app.inject({ method: 'GET', url: `/v1/installs/${install.id}`, headers: as(s.member.session, s.workspaceId) })).statusCode, 200);
  });

  test('renders page newest first with a cursor bound to the install', async () => {
    const { install } = await f.installed();
    for (const who of ['a', 'b', 'c']) await f.patch(install.id, { values: { who } });
    const page1 = await f.ok('GET', `/v1/installs/${install.id}/renders?limit=2`);
    assert.equal(page1.data.length, 2);
    assert.equal(page1.has_more, true);
    const page2 = await f.ok('GET', `/v1/installs/${install.id}/renders?limit=2&cursor=${page1.next_cursor}`);
    assert.deepEqual([page2.data.length, page2.has_more, page2.next_cursor], [2, false, null]);
    const all = [...page1.data, ...page2.data];
    assert.ok(all.every((r, i) => i === 0 || r.created_at <= all[i - 1].created_at));
    assert.equal(new Set(all.map((r) => r.id)).size, 4);
    const other = await f.installed();
    const foreignCursor = await f.call('GET', `/v1/installs/${other.install.id}/renders?cursor=${page1.next_cursor}`);
    assert.equal(foreignCursor.statusCode, 422);
    assert.deepEqual(firstError(foreignCursor.json()).path, ['query', 'cursor']);
  });
});

describe('PATCH /v1/installs/{id}', () => {
  test('a new desired version or new values queue a render; automatic_updates_enabled alone does not', async () => {
    const { install, v2 } = await f.installed();
    await h.app.jobs.runDue();
    const count = async () => (await f.renders(install.id)).length;
    assert.equal(await count(), 1);

    const auto = await f.patch(install.id, { automatic_updates_enabled: true });
    assert.equal(auto.automatic_updates_enabled, true);
    assert.notEqual(auto.etag, install.etag);
    assert.equal(await count(), 1, 'automatic_updates_enabled alone starts no render');

    const moved = await f.patch(install.id, { desired_version_id: v2.id });
    assert.deepEqual(moved.desired_version, { id: v2.id, semver: '2.0.0' });
    assert.equal(moved.current_version.semver, '1.0.0', 'current_version waits for the render');
    assert.equal(await count(), 2);
    const [render] = await f.renders(install.id);
    assert.deepEqual([render.state, render.package_version_id], ['queued', v2.id]);

    const vals = await f.patch(install.id, { values: { who: 'there' } });
    assert.deepEqual(vals.values, { who: 'there' });
    assert.equal(await count(), 3);
  });

  test('a PATCH that changes nothing makes no render and keeps the etag', async () => {
    const { install, v1 } = await f.installed({ b: 1, a: { y: 2, x: 1 } });
    for (const body of [{}, { desired_version_id: v1.id }, { values: { a: { x: 1, y: 2 }, b: 1 } }, { automatic_updates_enabled: false }]) {
      const res = await f.call('PATCH', `/v1/installs/${install.id}`, body, { 'if-match': install.etag });
      assert.equal(res.statusCode, 200, JSON.stringify(body));
      assert.equal(res.json().etag, install.etag, JSON.stringify(body));
    }
    assert.equal((await f.renders(install.id)).length, 1);
  });

  test('If-Match is required (422), checked under the write (409 current_etag), and a stale one is 409 even for a no-op', async () => {
    const { install } = await f.installed();
    const missing = await f.call('PATCH', `/v1/installs/${install.id}`, { values: {} });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(firstError(missing.json()).path, ['headers', 'if-match']);
    const stale = await f.call('PATCH', `/v1/installs/${install.id}`, {}, { 'if-match': '"old"' });
    assert.equal(stale.statusCode, 409);
    assert.deepEqual(firstError(stale.json()).metadata, { current_etag: install.etag });
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((who) => f.call('PATCH', `/v1/installs/${install.id}`, { values: { who } }, { 'if-match': `"${install.etag}"` })));
    assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 409, 409, 409], 'of concurrent writers with one etag exactly one wins');
    assert.equal((await f.renders(install.id)).length, 2);
  });

  test('a desired version of another package is 422 (7303); an unknown one 404, both at body.desired_version_id', async () => {
    const { install } = await f.installed();
    const other = await packageWithVersions();
    const wrong = await f.call('PATCH', `/v1/installs/${install.id}`, { desired_version_id: other.v1.id }, { 'if-match': install.etag });
    assert.equal(wrong.statusCode, 422);
    assert.deepEqual([firstError(wrong.json()).code, firstError(wrong.json()).path], [7303, ['body', 'desired_version_id']]);
    const unknown = await f.call('PATCH', `/v1/installs/${install.id}`, { desired_version_id: 'pkgv_00000000000000000000000000' }, { 'if-match': install.etag });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(firstError(unknown.json()).path, ['body', 'desired_version_id']);
    for (const body of [{ values: null }, { name: 'renamed' }, { automatic_updates_enabled: 1 }]) {
      const res = await f.call('PATCH', `/v1/installs/${install.id}`, body, { 'if-match': install.etag });
      assert.equal(res.statusCode, 422, JSON.stringify(body));
    }
  });
});
