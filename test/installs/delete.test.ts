import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';

/**
 * docs/spec-gaps.md, "Deleting an install and a package" (issue 50.5): DELETE /v1/installs/{id} (202 and an operation that removes the
 * repository) and DELETE /v1/packages/{id} (204, or 409 7308 while installs use it), on both
 * engines. Before this change both answered 405 (no DELETE on these paths).
 */
const h = useTestApp();
const s = h.seeded;
let f: ReturnType<typeof installFixture>;
const fx = () => (f ??= installFixture(h, s));

const send = (method: 'GET' | 'DELETE' | 'PATCH', url: string, headers: Record<string, string>, payload?: object) => h.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
const owner = (extra: Record<string, string> = {}) => as(s.owner.session, s.workspaceId, extra);

async function operationDone(id: string) {
  for (let i = 0; i < 20; i++) {
    await h.app.jobs.runDue();
    const op = (await send('GET', `/v1/operations/${id}`, owner())).json();
    if (op.done) return op;
    // A removal that waited for a canceled render's job comes back a second later.
    h.clock.advanceSeconds(2);
  }
  assert.fail(`operation ${id} never finished`);
}

describe('DELETE /v1/installs/{id}', () => {
  test('202 with an operation that succeeds; the install reads 404 everywhere, leaves the list, its repository is gone from disk and from git, its renders stay readable, its name is free', async () => {
    const { pkg, v1, install } = await fx().installed();
    await h.app.jobs.runDue();
    const [render] = await fx().renders(install.id);
    assert.equal(render.state, 'succeeded');
    assert.ok(fs.existsSync(fx().repoPath(install.id)));
    const got = await fx().getInstall(install.id);

    const stale = await send('DELETE', `/v1/installs/${install.id}`, owner({ 'if-match': '"stale"' }));
    assert.equal(stale.statusCode, 409, stale.body);
    assert.equal(stale.json().errors[0].code, 7030);
    assert.equal(stale.json().errors[0].metadata.current_etag, got.etag);
    const missing = await send('DELETE', `/v1/installs/${install.id}`, owner());
    assert.equal(missing.statusCode, 422, missing.body);

    const res = await send('DELETE', `/v1/installs/${install.id}`, owner({ 'if-match': got.etag }));
    assert.equal(res.statusCode, 202, res.body);
    const op = await operationDone(res.json().operation_id);
    assert.equal(op.kind, 'install.delete');
    assert.equal(op.error, null);
    assert.deepEqual(op.result, { install_id: install.id, repository_removed: true });

    for (const [method, url] of [
      ['GET', `/v1/installs/${install.id}`],
      ['GET', `/v1/installs/${install.id}/renders`],
      ['GET', `/v1/installs/${install.id}/repository`],
    ] as const) {
      const r = await send(method, url, owner());
      assert.equal(r.statusCode, 404, `${method} ${url}: ${r.body}`);
      assert.equal(r.json().errors[0].code, 7002);
    }
    const patch = await send('PATCH', `/v1/installs/${install.id}`, owner({ 'if-match': '*' }), { values: { who: 'x' } });
    assert.equal(patch.statusCode, 404, patch.body);
    const again = await send('DELETE', `/v1/installs/${install.id}`, owner({ 'if-match': '*' }));
    assert.equal(again.statusCode, 404, again.body);
    const refs = await send('GET', `/v1/installs/${install.id}/repository.git/info/refs?service=git-upload-pack`, as(s.apiToken, undefined));
    assert.equal(refs.statusCode, 404, 'git is told the repository does not exist');
    const list = (await send('GET', '/v1/installs?limit=100', owner())).json();
    assert.ok(!list.data.some((i: { id: string }) => i.id === install.id));
    assert.ok(!fs.existsSync(fx().repoPath(install.id)), 'the repository directory is gone');

    // Its renders stay readable by id; their files went with the repository.
    const kept = await send('GET', `/v1/renders/${render.id}`, owner());
    assert.equal(kept.statusCode, 200, kept.body);
    assert.equal(kept.json().state, 'succeeded');
    const files = await send('GET', `/v1/renders/${render.id}/files`, owner());
    assert.equal(files.statusCode, 404, files.body);

    // The name is free: a new install takes it, with a repository of its own.
    const reused = await fx().ok('POST', '/v1/installs', { name: install.name, package_id: pkg.id, version_id: v1.id, values: { who: 'again' } });
    assert.notEqual(reused.id, install.id);
    assert.equal(reused.name, install.name);

    // Both in the audit log.
    const events = (await send('GET', `/v1/audit_events?type=install.deleted&resource_id=${install.id}`, owner())).json();
    assert.equal(events.data.length, 1);
    assert.equal(events.data[0].data.name, install.name);
  });

  test('a render queued when the install is deleted is canceled, its operation done; the removal does not wait for a worker that never took it', async () => {
    const { install, v2 } = await fx().installed();
    await h.app.jobs.runDue();
    const updated = await fx().patch(install.id, { desired_version_id: v2.id });
    const queued = (await fx().renders(install.id))[0];
    assert.equal(queued.state, 'queued');
    const res = await send('DELETE', `/v1/installs/${install.id}`, owner({ 'if-match': updated.etag }));
    assert.equal(res.statusCode, 202, res.body);
    const canceled = (await send('GET', `/v1/renders/${queued.id}`, owner())).json();
    assert.equal(canceled.state, 'superseded');
    assert.match(canceled.message, /install was deleted/);
    const renderOp = (await send('GET', `/v1/operations/${queued.operation_id}`, owner())).json();
    assert.equal(renderOp.done, true);
    await operationDone(res.json().operation_id);
    assert.equal((await send('GET', `/v1/renders/${queued.id}`, owner())).json().state, 'superseded', 'its job, when it ran, left it canceled');
    assert.ok(!fs.existsSync(fx().repoPath(install.id)));
  });

  test('a member is refused (403 7023); another workspace sees 404', async () => {
    const { install } = await fx().installed();
    const got = await fx().getInstall(install.id);
    const member = await send('DELETE', `/v1/installs/${install.id}`, as(s.member.session, s.workspaceId, { 'if-match': got.etag }));
    assert.equal(member.statusCode, 403, member.body);
    assert.equal(member.json().errors[0].code, 7023);
    const other = await h.seed('Other');
    const foreign = await send('DELETE', `/v1/installs/${install.id}`, as(other.owner.session, other.workspaceId, { 'if-match': got.etag }));
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal((await send('GET', `/v1/installs/${install.id}`, owner())).statusCode, 200, 'still there');
  });
});

describe('DELETE /v1/packages/{id}', () => {
  test('409 7308 naming the live installs that use it; 204 once they are deleted; then 404, its versions too, and its name is free', async () => {
    const { pkg, v1, install } = await fx().installed();
    const second = await fx().createInstall({ package_id: pkg.id, version_id: v1.id });
    await h.app.jobs.runDue();
    const got = await send('GET', `/v1/packages/${pkg.id}`, owner());
    assert.equal(got.headers.etag, `"${got.json().etag}"`);
    const etag = got.json().etag as string;

    const stale = await send('DELETE', `/v1/packages/${pkg.id}`, owner({ 'if-match': '"stale"' }));
    assert.equal(stale.statusCode, 409, stale.body);
    assert.equal(stale.json().errors[0].code, 7030);
    const used = await send('DELETE', `/v1/packages/${pkg.id}`, owner({ 'if-match': etag }));
    assert.equal(used.statusCode, 409, used.body);
    assert.equal(used.json().errors[0].code, 7308);
    assert.deepEqual(used.json().errors[0].metadata.install_ids.split(',').sort(), [install.id, second.id].sort());

    for (const i of [install, second]) {
      const e = (await fx().getInstall(i.id)).etag;
      assert.equal((await send('DELETE', `/v1/installs/${i.id}`, owner({ 'if-match': e }))).statusCode, 202);
    }
    const member = await send('DELETE', `/v1/packages/${pkg.id}`, as(s.member.session, s.workspaceId, { 'if-match': etag }));
    assert.equal(member.statusCode, 403, member.body);
    const other = await h.seed('Other packages');
    assert.equal((await send('DELETE', `/v1/packages/${pkg.id}`, as(other.owner.session, other.workspaceId, { 'if-match': etag }))).statusCode, 404);

    const res = await send('DELETE', `/v1/packages/${pkg.id}`, owner({ 'if-match': etag }));
    assert.equal(res.statusCode, 204, res.body);
    for (const url of [`/v1/packages/${pkg.id}`, `/v1/packages/${pkg.id}/versions`, `/v1/packages/${pkg.id}/versions/${v1.id}`]) {
      assert.equal((await send('GET', url, owner())).statusCode, 404, url);
    }
    const list = (await send('GET', '/v1/packages?limit=100', owner())).json();
    assert.ok(!list.data.some((p: { id: string }) => p.id === pkg.id));
    const install2 = await send('POST' as 'GET', '/v1/installs', owner(), { name: fx().unique('inst'), package_id: pkg.id, version_id: v1.id });
    assert.equal(install2.statusCode, 404, 'no install of a deleted package');
    const reused = await fx().ok('POST', '/v1/packages', { name: pkg.name });
    assert.notEqual(reused.id, pkg.id);
    const events = (await send('GET', `/v1/audit_events?type=package.deleted&resource_id=${pkg.id}`, owner())).json();
    assert.equal(events.data.length, 1);
  });
});
