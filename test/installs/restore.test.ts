import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { withPipelineStatuses } from '../helpers/openapi.js';
import { renderStore } from '../../src/installs/renders/store.js';
import fs from 'node:fs';
import path from 'node:path';
import { failAtCommit, installFixture } from './fixture.js';
import { GitStorage } from '../../src/git/git-storage.js';
import { gitProcessesStarted } from '../../src/git/run-git.js';

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

/** An install rendered at 1.0.0 (values who=world), then at 2.0.0 (who=moon): two succeeded renders. */
async function twoRenders() {
  const x = await f.installed();
  await h.app.jobs.runDue();
  await f.patch(x.install.id, { desired_version_id: x.v2.id, values: { who: 'moon' } });
  await h.app.jobs.runDue();
  const [second, first] = await f.renders(x.install.id);
  assert.deepEqual([first.state, second.state], ['succeeded', 'succeeded']);
  return { ...x, first, second, install: await f.getInstall(x.install.id) };
}

describe('POST /v1/installs/{id}:restore', () => {
  test('answers 200 {install, render} with exactly the spec fields; the render is running with its commit', async () => {
    const { install, first, v1, v2 } = await twoRenders();
    const res = await f.restore(install.id, first.id, install.etag);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['install', 'render']);
    assert.deepEqual(Object.keys(body.install).sort(), ['automatic_updates_enabled', 'current_version', 'desired_version', 'etag', 'id', 'updated_at']);
    assert.deepEqual(Object.keys(body.render).sort(), [
      'commit_sha',
      'created_at',
      'id',
      'install_id',
      'message',
      'operation_id',
      'package_version_id',
      'render_hash',
      'repository_change_request_id',
      'restored_from_render_id',
      'state',
      'updated_at',
      'workspace_id',
    ]);
    const { render } = body;
    assert.equal(body.install.id, install.id);
    assert.deepEqual(body.install.desired_version, { id: v1.id, semver: '1.0.0' }, 'desired_version becomes the old render’s at once');
    assert.deepEqual(body.install.current_version, { id: v2.id, semver: '2.0.0' }, 'current_version follows only when the operation completes');
    assert.equal(body.install.automatic_updates_enabled, false);
    assert.notEqual(body.install.etag, install.etag);
    assert.equal(res.headers.etag, `"${body.install.etag}"`);
    assert.match(render.id, /^rnd_[0-9a-z]{26}$/);
    assert.equal(render.workspace_id, s.workspaceId);
    assert.equal(render.install_id, install.id);
    assert.equal(render.state, 'running');
    assert.equal(render.restored_from_render_id, first.id);
    assert.match(render.commit_sha, /^[0-9a-f]{40}$/);
    assert.match(render.operation_id, /^op_[0-9a-z]{26}$/);
    assert.equal(render.package_version_id, v1.id);
    assert.equal(render.render_hash, first.render_hash);
    assert.equal(render.repository_change_request_id, null);
    assert.equal(render.message, `Restore ${first.id} as ${render.id}: ${f.git(install.id, 'log', '-1', '--format=%s', render.commit_sha).split(': ')[1]}`);
    assert.deepEqual(await f.getRender(render.id), render, 'GET answers the same render');
  });

  test('the new commit holds the old tree on top of the current head; history is kept; the operation completes it', async () => {
    const { install, first, second, v1 } = await twoRenders();
    const { render } = (await f.restore(install.id, first.id, install.etag)).json();
    assert.equal(f.git(install.id, 'rev-parse', `${render.commit_sha}^{tree}`), f.git(install.id, 'rev-parse', `${first.commit_sha}^{tree}`));
    assert.equal(f.git(install.id, 'rev-parse', `${render.commit_sha}^`), second.commit_sha, 'parent is the head before the restore');
    assert.equal(f.git(install.id, 'rev-parse', 'refs/heads/main'), render.commit_sha);
    assert.equal(f.git(install.id, 'rev-list', 'refs/heads/main'), [render.commit_sha, second.commit_sha, first.commit_sha].join('\n'));
    assert.match(f.git(install.id, 'log', '-1', '--format=%B', render.commit_sha), new RegExp(`Restored-From-Render-Id: ${first.id}`));

    const op = await f.ok('GET', `/v1/operations/${render.operation_id}`);
    assert.deepEqual([op.kind, op.done], ['install.restore', false]);
    await h.app.jobs.runDue();
    const done = await f.getRender(render.id);
    assert.equal(done.state, 'succeeded');
    assert.equal(done.commit_sha, render.commit_sha, 'the operation verifies the commit; it makes no other');
    const now = await f.getInstall(install.id);
    assert.deepEqual(now.current_version, { id: v1.id, semver: '1.0.0' });
    assert.deepEqual(now.values, { who: 'world' }, 'the values that made the old tree come back with it');
    const finished = await f.ok('GET', `/v1/operations/${render.operation_id}`);
    assert.deepEqual([finished.done, finished.error, finished.result], [true, null, { render_id: render.id, state: 'succeeded', commit_sha: render.commit_sha }]);
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '3');
    f.git(install.id, 'fsck', '--strict', '--no-dangling');

    // A restored render can be restored in turn, and a later render builds on top of it.
    const again = await f.restore(install.id, second.id, now.etag);
    assert.equal(again.statusCode, 200);
    await h.app.jobs.runDue();
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '4');
    for (const r of [first, second, render]) assert.equal(f.git(install.id, 'merge-base', '--is-ancestor', r.commit_sha, 'refs/heads/main'), '');
  });

  test('a replay with the same Idempotency-Key answers the same and makes no second commit', async () => {
    const { install, first } = await twoRenders();
    const one = await f.restore(install.id, first.id, install.etag, 'restore-once');
    const two = await f.restore(install.id, first.id, install.etag, 'restore-once');
    assert.equal(two.statusCode, 200);
    assert.equal(two.headers['idempotent-replayed'], 'true');
    assert.deepEqual(two.json(), one.json());
    assert.equal(two.headers.etag, one.headers.etag);
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '3');
    assert.equal((await f.renders(install.id)).length, 3);
    const other = await f.restore(install.id, (await f.renders(install.id))[1].id, install.etag, 'restore-once');
    assert.equal(other.statusCode, 422, 'same key, another request');
    assert.equal(firstError(other.json()).code, 7032);
  });

  test('ten replays of one Idempotency-Key, at once and one after another, make one commit', async () => {
    const { install, first } = await twoRenders();
    const key = f.unique('ten');
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => f.restore(install.id, first.id, install.etag, key)));
    const sequential = [];
    for (let i = 0; i < 5; i++) sequential.push(await f.restore(install.id, first.id, install.etag, key));
    const answers = [...concurrent, ...sequential];
    const won = answers.filter((a) => a.statusCode === 200 && a.headers['idempotent-replayed'] !== 'true');
    assert.equal(won.length, 1, answers.map((a) => a.statusCode).join(','));
    for (const a of answers) {
      if (a.statusCode === 200) assert.deepEqual(a.json(), won[0]!.json());
      else assert.deepEqual([a.statusCode, firstError(a.json()).code], [409, 7031], 'still in flight');
    }
    for (const a of sequential) assert.equal(a.headers['idempotent-replayed'], 'true');
    await h.app.jobs.runDue();
    assert.equal(f.git(install.id, 'rev-list', '--count', 'main'), '3');
    assert.equal((await f.renders(install.id)).filter((r) => r.restored_from_render_id).length, 1);
  });

  test('a restore whose transaction fails leaves main as it was; the retry with the same key makes the one commit', async () => {
    const { install, first, second } = await twoRenders();
    // The database refuses the restore's transaction at COMMIT: the commit object is made by then.
    const probe = await failAtCommit(h.database, 'renders', 'new.restored_from_render_id is not null');
    let failed;
    try {
      failed = await f.restore(install.id, first.id, install.etag, 'fails-then-works');
    } finally {
      await probe.remove();
    }
    assert.equal(failed.statusCode, 500, failed.body);
    assert.equal(f.git(install.id, 'rev-parse', 'main'), second.commit_sha, 'main did not move');
    assert.equal(f.git(install.id, 'rev-list', '--count', 'main'), '2');
    assert.equal((await f.renders(install.id)).length, 2, 'no render recorded');
    assert.equal((await f.getInstall(install.id)).etag, install.etag);

    const retry = await f.restore(install.id, first.id, install.etag, 'fails-then-works');
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], undefined, 'a 5xx is not kept: the retry ran');
    const { render } = retry.json();
    assert.equal(f.git(install.id, 'rev-parse', 'main'), render.commit_sha);
    assert.equal(f.git(install.id, 'rev-parse', `${render.commit_sha}^`), second.commit_sha);
    await h.app.jobs.runDue();
    assert.equal((await f.getRender(render.id)).state, 'succeeded');
    assert.equal(f.git(install.id, 'rev-list', '--count', 'main'), '3', 'exactly one restore commit');
    // Every commit on main names a render the database has.
    const named = f.git(install.id, 'log', '--format=%(trailers:key=Render-Id,valueonly)', 'main').split('\n').filter(Boolean);
    const renders = new Set((await f.renders(install.id)).map((r) => r.id));
    assert.equal(named.length, 3);
    for (const id of named) assert.ok(renders.has(id), `${id} names no render`);
  });

  test('a process that died between its commit and the branch move: the job moves main, from the recorded parent', async () => {
    const { install, first, second, v1 } = await twoRenders();
    // What `kill -9` after the transaction leaves: the render committed, main not moved. Here
    // the move fails because main's lock file is held (by a live writer, young), as it would be.
    const lock = path.join(f.repoPath(install.id), 'refs', 'heads', 'main.lock');
    fs.writeFileSync(lock, '');
    let res;
    try {
      res = await f.restore(install.id, first.id, install.etag);
    } finally {
      fs.unlinkSync(lock);
    }
    assert.equal(res.statusCode, 200, res.body);
    const { render } = res.json();
    assert.match(render.commit_sha, /^[0-9a-f]{40}$/);
    assert.equal(f.git(install.id, 'rev-parse', 'main'), second.commit_sha, 'not moved yet');
    assert.equal(f.git(install.id, 'rev-parse', `${render.commit_sha}^`), second.commit_sha, 'the commit is built on the head it read');
    await h.app.jobs.runDue();
    assert.equal(f.git(install.id, 'rev-parse', 'main'), render.commit_sha, 'the job moved main');
    const done = await f.getRender(render.id);
    assert.deepEqual([done.state, done.commit_sha], ['succeeded', render.commit_sha]);
    assert.deepEqual((await f.getInstall(install.id)).current_version, { id: v1.id, semver: '1.0.0' });
    assert.equal(f.git(install.id, 'rev-list', '--count', 'main'), '3');
  });

  test('a restore that must first land another, with main locked by a live writer at that instant: 503 7337 with Retry-After, nothing changed; the retry lands both', async () => {
    const { install, first, second } = await twoRenders();
    const lock = path.join(f.repoPath(install.id), 'refs', 'heads', 'main.lock');
    fs.writeFileSync(lock, '');
    let pending, busy;
    try {
      pending = (await f.restore(install.id, first.id, install.etag)).json().render;
      const rendersBefore = (await f.renders(install.id)).length;
      busy = await f.restore(install.id, second.id, (await f.getInstall(install.id)).etag);
      assert.equal((await f.renders(install.id)).length, rendersBefore, 'the refused restore made no render');
    } finally {
      fs.unlinkSync(lock);
    }
    assert.equal(busy.statusCode, 503, busy.body);
    assert.equal(firstError(busy.json()).code, 7337);
    assert.equal(busy.headers['retry-after'], '1');
    assert.equal(f.git(install.id, 'rev-parse', 'main'), second.commit_sha, 'main did not move');
    const retry = await f.restore(install.id, second.id, (await f.getInstall(install.id)).etag);
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(f.git(install.id, 'rev-parse', `${retry.json().render.commit_sha}^`), pending.commit_sha, 'the retry landed the waiting restore first and built on it');
  });

  test('a restore and its operation start no git process: objects and the branch move are written in-process', async () => {
    const { install, first } = await twoRenders();
    const before = gitProcessesStarted();
    const res = await f.restore(install.id, first.id, install.etag);
    assert.equal(res.statusCode, 200, res.body);
    await h.app.jobs.runDue();
    assert.equal((await f.getRender(res.json().render.id)).state, 'succeeded');
    assert.equal(gitProcessesStarted() - before, 0);
    f.git(install.id, 'fsck', '--strict', '--no-dangling');
  });

  test('main moved between the commit made before the transaction and the transaction: the commit is made again on the new head', async () => {
    const { install, first, second } = await twoRenders();
    const original = GitStorage.prototype.commit;
    let foreign = '';
    // Another writer lands a commit right after this request made its commit object.
    GitStorage.prototype.commit = async function (this: GitStorage, repoId, c) {
      const made = await original.call(this, repoId, c);
      if (!foreign) {
        foreign = await original.call(this, repoId, { tree: c.tree, parent: c.parent, message: 'another writer\n', timeSeconds: 1 });
        assert.equal(await this.advanceMain(repoId, foreign, c.parent), true);
      }
      return made;
    };
    let res;
    try {
      res = await f.restore(install.id, first.id, install.etag);
    } finally {
      GitStorage.prototype.commit = original;
    }
    assert.equal(res.statusCode, 200, res.body);
    const { render } = res.json();
    assert.equal(f.git(install.id, 'rev-parse', `${render.commit_sha}^`), foreign, 'built on the head it found under the lock');
    assert.equal(f.git(install.id, 'rev-parse', 'main'), render.commit_sha);
    assert.equal(f.git(install.id, 'rev-list', 'main'), [render.commit_sha, foreign, second.commit_sha, first.commit_sha].join('\n'));
    await h.app.jobs.runDue();
    assert.equal((await f.getRender(render.id)).state, 'succeeded');
    f.git(install.id, 'fsck', '--strict');
  });

  test('restores run one at a time in a process, so a burst of them leaves room for every other request', async () => {
    const a = await twoRenders();
    const b = await twoRenders();
    const original = GitStorage.prototype.commit;
    let inside = 0;
    let most = 0;
    GitStorage.prototype.commit = async function (this: GitStorage, repoId, c) {
      most = Math.max(most, ++inside);
      try {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return await original.call(this, repoId, c);
      } finally {
        inside--;
      }
    };
    try {
      const answers = await Promise.all([f.restore(a.install.id, a.first.id, a.install.etag), f.restore(b.install.id, b.first.id, b.install.etag)]);
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        [200, 200],
      );
    } finally {
      GitStorage.prototype.commit = original;
    }
    assert.equal(most, 1);
  });

  test('a render made after a restore that is not on main yet lands the restore first, then builds on it', async () => {
    const { install, first, second } = await twoRenders();
    const lock = path.join(f.repoPath(install.id), 'refs', 'heads', 'main.lock');
    fs.writeFileSync(lock, '');
    let restored;
    try {
      restored = (await f.restore(install.id, first.id, install.etag)).json().render;
    } finally {
      fs.unlinkSync(lock);
    }
    // Another writer of main (a render, under the install's lock) comes before the restore's job.
    await f.patch(install.id, { values: { who: 'after' } });
    const [next] = await f.renders(install.id);
    const renderJob = await h.database.db.selectFrom('jobs').select('id').where('kind', '=', 'render.run').where('payload', 'like', `%${next.id}%`).executeTakeFirstOrThrow();
    await h.database.db.updateTable('jobs').set({ run_at: 0 }).where('id', '=', renderJob.id).execute();
    await h.database.db
      .updateTable('jobs')
      .set({ run_at: h.clock.nowMs() + 3_600_000 })
      .where('kind', '=', 'render.restore')
      .where('payload', 'like', `%${restored.id}%`)
      .execute();
    await h.app.jobs.runDue();
    const after = await f.getRender(next.id);
    assert.equal(after.state, 'succeeded');
    assert.deepEqual(f.git(install.id, 'rev-list', 'main').split('\n'), [after.commit_sha, restored.commit_sha, second.commit_sha, first.commit_sha]);
    h.clock.advanceSeconds(3600);
    await h.app.jobs.runDue();
    assert.equal((await f.getRender(restored.id)).state, 'succeeded');
    assert.equal(f.git(install.id, 'rev-list', '--count', 'main'), '4');
  });

  test('Idempotency-Key and If-Match are required (422 at their header); a stale If-Match is 409 with current_etag', async () => {
    const { install, first } = await twoRenders();
    const url = `/v1/installs/${install.id}:restore`;
    const noKey = await f.call('POST', url, { render_id: first.id }, { 'if-match': install.etag });
    assert.equal(noKey.statusCode, 422);
    assert.deepEqual(firstError(noKey.json()).path, ['headers', 'idempotency-key']);
    const noMatch = await f.call('POST', url, { render_id: first.id }, { 'idempotency-key': 'k-nomatch' });
    assert.equal(noMatch.statusCode, 422);
    assert.deepEqual(firstError(noMatch.json()).path, ['headers', 'if-match']);
    const stale = await f.restore(install.id, first.id, '"not-the-etag"');
    assert.equal(stale.statusCode, 409);
    assert.deepEqual([firstError(stale.json()).code, firstError(stale.json()).metadata], [7030, { current_etag: install.etag }]);
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '2', 'a refused restore commits nothing');
    for (const body of [{}, { render_id: '' }, { render_id: 'r'.repeat(55) }, { render_id: first.id, extra: 1 }, { render_id: 5 }]) {
      const res = await f.call('POST', url, body, { 'if-match': install.etag, 'idempotency-key': f.unique('k') });
      assert.equal(res.statusCode, 422, JSON.stringify(body));
      assert.equal(firstError(res.json()).path?.[0], 'body');
    }
    const longId = await f.call('POST', `/v1/installs/${'i'.repeat(56)}:restore`, { render_id: first.id }, { 'if-match': '*', 'idempotency-key': f.unique('k') });
    assert.equal(longId.statusCode, 422);
    assert.deepEqual(firstError(longId.json()).path, ['path', 'id']);
  });

  test('render checks in the spec order: unknown 404, other package 422, other install 404, not succeeded 409', async () => {
    const a = await twoRenders();
    const sibling = await f.createInstall({ package_id: a.pkg.id, version_id: a.v1.id, values: { who: 'x' } });
    const otherPkg = await f.installed();
    await h.app.jobs.runDue();
    const siblingRender = (await f.renders(sibling.id))[0];
    const otherPkgRender = (await f.renders(otherPkg.install.id))[0];
    assert.equal(siblingRender.state, 'succeeded');

    const unknown = await f.restore(a.install.id, 'rnd_00000000000000000000000000', a.install.etag);
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual([firstError(unknown.json()).code, firstError(unknown.json()).path], [7002, ['body', 'render_id']]);

    const wrongPackage = await f.restore(a.install.id, otherPkgRender.id, a.install.etag);
    assert.equal(wrongPackage.statusCode, 422);
    assert.deepEqual([firstError(wrongPackage.json()).code, firstError(wrongPackage.json()).path], [7304, ['body', 'render_id']]);

    const wrongInstall = await f.restore(a.install.id, siblingRender.id, a.install.etag);
    assert.equal(wrongInstall.statusCode, 404);
    assert.deepEqual([firstError(wrongInstall.json()).code, firstError(wrongInstall.json()).path], [7002, ['body', 'render_id']]);

    await f.patch(a.install.id, { values: {} });
    await h.app.jobs.runDue();
    await f.patch(a.install.id, { values: { who: 'q' } });
    const [queued, failed] = await f.renders(a.install.id);
    assert.deepEqual([queued.state, failed.state], ['queued', 'failed']);
    const etag = (await f.getInstall(a.install.id)).etag;
    for (const r of [failed, queued]) {
      const res = await f.restore(a.install.id, r.id, etag);
      assert.equal(res.statusCode, 409);
      assert.equal(firstError(res.json()).code, 7305);
      assert.deepEqual(firstError(res.json()).metadata, { state: r.state });
    }
    // Existence before state: another workspace's render is simply unknown, even with a stale etag.
    const t = await h.seed('Other');
    const g = installFixture(h, t);
    const foreign = await g.installed();
    await h.app.jobs.runDue();
    const foreignRender = (await g.renders(foreign.install.id))[0];
    const cross = await f.restore(a.install.id, foreignRender.id, '"stale"');
    assert.equal(cross.statusCode, 404);
    assert.deepEqual(firstError(cross.json()).path, ['body', 'render_id']);
    const foreignInstall = await f.restore(foreign.install.id, foreignRender.id, '*');
    assert.equal(foreignInstall.statusCode, 404);
    assert.equal(firstError(foreignInstall.json()).code, 7002);
    assert.equal(firstError(foreignInstall.json()).path, undefined);
    // A render state is checked before the etag.
    const staleAndFailed = await f.restore(a.install.id, failed.id, '"stale"');
    assert.equal(staleAndFailed.statusCode, 409);
    assert.equal(firstError(staleAndFailed.json()).code, 7305);
  });

  test('credentials and workspace: 401 without one, 403 for a session without Service-Context', async () => {
    const { install, first } = await twoRenders();
    const url = `/v1/installs/${install.id}:restore`;
    const headers = { 'if-match': install.etag, 'idempotency-key': 'k-auth' };
    const none = await h.app.inject({ method: 'POST', url, headers, payload: { render_id: first.id } });
    assert.equal(none.statusCode, 401);
    const noContext = await h.app.inject({ method: 'POST', url, headers: as(s.member.session, undefined, headers), payload: { render_id: first.id } });
    assert.equal(noContext.statusCode, 403);
    const member = await h.app.inject({ method: 'POST', url, headers: as(s.member.session, s.workspaceId, headers), payload: { render_id: first.id } });
    assert.equal(member.statusCode, 200, 'any member may restore');
  });

  test('the restore supersedes queued renders, and a running one that the restore overtook is superseded too', async () => {
    const { install, first } = await twoRenders();
    await f.patch(install.id, { values: { who: 'queued' } });
    await f.patch(install.id, { values: { who: 'running' } });
    const [running, queued] = await f.renders(install.id);
    // As a worker does when it picks the render up, before it reaches the branch.
    await renderStore.transition(h.database.db, running.id, 'queued', { state: 'running', updated_at: Math.floor(h.clock.nowMs() / 1000) });
    const { render } = (await f.restore(install.id, first.id, (await f.getInstall(install.id)).etag)).json();
    assert.equal((await f.getRender(queued.id)).state, 'superseded');
    await h.app.jobs.runDue();
    const overtaken = await f.getRender(running.id);
    assert.equal(overtaken.state, 'superseded');
    assert.equal(overtaken.message, `Superseded by ${render.id}, which reached the branch first`);
    assert.equal(overtaken.commit_sha, null);
    assert.equal(f.git(install.id, 'rev-parse', 'refs/heads/main'), render.commit_sha, 'the older render never lands on top of the restore');
    assert.equal((await f.getRender(render.id)).state, 'succeeded');
  });

  test('a restore whose commit left the history of main fails its verification (7311); main is never forced', async () => {
    const { install, first, second } = await twoRenders();
    const { render } = (await f.restore(install.id, first.id, install.etag)).json();
    // Someone rewrites main behind the platform's back, dropping the restore's commit and its parent.
    f.git(install.id, 'update-ref', 'refs/heads/main', first.commit_sha);
    await h.app.jobs.runDue();
    const failed = await f.getRender(render.id);
    assert.equal(failed.state, 'failed');
    assert.match(failed.message, /is not in the history of main/);
    assert.equal(f.git(install.id, 'rev-parse', 'refs/heads/main'), first.commit_sha, 'the job does not move main from a head it did not build on');
    const op = await f.ok('GET', `/v1/operations/${render.operation_id}`);
    assert.equal(op.error.code, 7311);
    assert.equal((await f.getInstall(install.id)).current_version.id, second.package_version_id, 'current_version does not follow a failed restore');
  });

  test('the OpenAPI document shows /v1/installs/{id}:restore with its headers and error statuses', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const op = doc.paths['/v1/installs/{id}:restore']?.post;
    assert.ok(
      op,
      Object.keys(doc.paths)
        .filter((p: string) => p.includes('install'))
        .join(', '),
    );
    assert.deepEqual(Object.keys(op.responses).sort(), withPipelineStatuses('post', ['200', '401', '403', '404', '409', '422']));
    const required = op.parameters
      .filter((p: { in: string; required?: boolean }) => p.in === 'header' && p.required)
      .map((p: { name: string }) => p.name)
      .sort();
    assert.deepEqual(required, ['idempotency-key', 'if-match']);
  });
});
