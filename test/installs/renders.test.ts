import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { useTestApp } from '../helpers/test-app.js';
import { repoRoot } from '../../src/config.js';
import { failAtCommit, installFixture } from './fixture.js';

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

const sha256 = (x: string | Buffer) => createHash('sha256').update(x).digest('hex');

/**
 * The repository's path is there but git cannot use it (a file stands in its place, as a volume
 * that failed to mount might): not a missing repository, which a first render would make.
 */
function makeUnreachable(installId: string) {
  const repo = f.repoPath(installId);
  fs.renameSync(repo, `${repo}.away`);
  fs.writeFileSync(repo, '');
  return {
    restore() {
      fs.unlinkSync(repo);
      fs.renameSync(`${repo}.away`, repo);
    },
  };
}

describe('render states and transitions', () => {
  test('a new install has a bare repository and a queued render that a worker commits: queued -> running -> succeeded', async () => {
    const { install, v1 } = await f.installed();
    assert.equal(f.git(install.id, 'rev-parse', '--is-bare-repository'), 'true');
    assert.equal(install.current_version, null, 'no current version before a first success');
    assert.deepEqual(install.desired_version, { id: v1.id, semver: '1.0.0' });

    const [queued] = await f.renders(install.id);
    assert.equal(queued.state, 'queued');
    assert.equal(queued.commit_sha, null);
    assert.equal(queued.render_hash, null);
    assert.equal(queued.restored_from_render_id, null);
    assert.equal(queued.repository_change_request_id, null);
    assert.match(queued.operation_id, /^op_[0-9a-z]{26}$/);
    assert.equal((await f.ok('GET', `/v1/operations/${queued.operation_id}`)).done, false);

    await h.app.jobs.runDue();
    const done = await f.getRender(queued.id);
    assert.equal(done.state, 'succeeded');
    assert.match(done.commit_sha, /^[0-9a-f]{40}$/);
    assert.equal(f.git(install.id, 'rev-parse', 'refs/heads/main'), done.commit_sha);
    assert.equal(f.git(install.id, 'show', `${done.commit_sha}:hello.txt`), 'Hello world v1');
    assert.equal(f.git(install.id, 'ls-tree', '-r', '--name-only', done.commit_sha), 'hello.txt', 'the whole tree is the rendered files');
    const message = f.git(install.id, 'log', '-1', '--format=%B', done.commit_sha);
    assert.match(message, new RegExp(`^Render ${done.id}: .+ 1\\.0\\.0`));
    assert.match(message, new RegExp(`Package-Version-Id: ${v1.id}`));
    assert.equal(done.message, message.split('\n')[0]);
    // render_hash: SHA-256 over "<path>\0<sha256(content)>\n" lines in path order.
    assert.equal(done.render_hash, sha256(`hello.txt\0${sha256('Hello world v1\n')}\n`));

    const after = await f.getInstall(install.id);
    assert.deepEqual(after.current_version, { id: v1.id, semver: '1.0.0' });
    assert.notEqual(after.etag, install.etag, 'current_version moved, so the etag did');
    const op = await f.ok('GET', `/v1/operations/${done.operation_id}`);
    assert.equal(op.kind, 'install.render');
    assert.equal(op.done, true);
    assert.deepEqual(op.result, { render_id: done.id, state: 'succeeded', commit_sha: done.commit_sha });
    assert.equal(await h.app.jobs.runDue(), 0, 'nothing left to run');
  });

  test('a render runs with the values and version of its PATCH and commits on top of the previous one', async () => {
    const { install, v2 } = await f.installed();
    await h.app.jobs.runDue();
    const first = (await f.renders(install.id))[0];
    await f.patch(install.id, { desired_version_id: v2.id, values: { who: 'moon' } });
    await h.app.jobs.runDue();
    const [second] = await f.renders(install.id);
    assert.equal(second.state, 'succeeded');
    assert.equal(second.package_version_id, v2.id);
    assert.equal(f.git(install.id, 'rev-parse', `${second.commit_sha}^`), first.commit_sha, 'parent is the previous head');
    assert.equal(f.git(install.id, 'show', `${second.commit_sha}:conf/app.yaml`), 'name: moon');
    assert.equal(f.git(install.id, 'ls-tree', '-r', '--name-only', second.commit_sha), 'conf/app.yaml\nhello.txt');
    assert.deepEqual((await f.getInstall(install.id)).current_version, { id: v2.id, semver: '2.0.0' });
  });

  test('a render whose output equals the head still makes its own commit, with the same tree', async () => {
    const { install } = await f.installed();
    await h.app.jobs.runDue();
    await f.patch(install.id, { values: { who: 'world', unused: true } });
    await h.app.jobs.runDue();
    const [second, first] = await f.renders(install.id);
    assert.equal(second.state, 'succeeded');
    assert.notEqual(second.commit_sha, first.commit_sha);
    assert.equal(f.git(install.id, 'rev-parse', `${second.commit_sha}^{tree}`), f.git(install.id, 'rev-parse', `${first.commit_sha}^{tree}`));
    assert.equal(second.render_hash, first.render_hash);
  });

  test('a template error fails the render with a message naming the variable; nothing is committed', async () => {
    const { install, v1 } = await f.installed({ nobody: 1 });
    await h.app.jobs.runDue();
    const [failed] = await f.renders(install.id);
    assert.equal(failed.state, 'failed');
    assert.equal(failed.commit_sha, null);
    assert.match(failed.message, /hello\.txt: no value for \{\{who\}\}/);
    assert.equal(f.git(install.id, 'for-each-ref'), '', 'no branch, no commit');
    const op = await f.ok('GET', `/v1/operations/${failed.operation_id}`);
    assert.equal(op.done, true);
    assert.equal(op.result, null);
    assert.equal(op.error.code, 7310);
    assert.match(op.error.message, /\{\{who\}\}/);
    const now = await f.getInstall(install.id);
    assert.equal(now.current_version, null);
    assert.deepEqual(now.desired_version, { id: v1.id, semver: '1.0.0' });
  });

  test('a failed render after a success leaves the branch and current_version alone', async () => {
    const { install, v1 } = await f.installed();
    await h.app.jobs.runDue();
    const head = f.git(install.id, 'rev-parse', 'refs/heads/main');
    await f.patch(install.id, { values: {} });
    await h.app.jobs.runDue();
    const [failed] = await f.renders(install.id);
    assert.equal(failed.state, 'failed');
    assert.equal(f.git(install.id, 'rev-parse', 'refs/heads/main'), head);
    assert.deepEqual((await f.getInstall(install.id)).current_version, { id: v1.id, semver: '1.0.0' });
  });

  test('older queued renders are superseded when a newer one is queued, and never run', async () => {
    const { install } = await f.installed();
    await f.patch(install.id, { values: { who: 'a' } });
    await f.patch(install.id, { values: { who: 'b' } });
    const [newest, middle, first] = await f.renders(install.id);
    assert.deepEqual([newest.state, middle.state, first.state], ['queued', 'superseded', 'superseded']);
    assert.equal(first.message, `Superseded by ${middle.id} before it ran`);
    const op = await f.ok('GET', `/v1/operations/${first.operation_id}`);
    assert.deepEqual([op.done, op.error, op.result], [true, null, { render_id: first.id, state: 'superseded', commit_sha: null }]);
    await h.app.jobs.runDue();
    const states = (await f.renders(install.id)).map((r) => r.state);
    assert.deepEqual(states, ['succeeded', 'superseded', 'superseded']);
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '1', 'only the newest render committed');
    assert.equal(f.git(install.id, 'show', 'refs/heads/main:hello.txt'), 'Hello b v1');
  });

  test('a render whose repository is unreachable stays running and is retried, then succeeds', async () => {
    const { install } = await f.installed();
    const unreachable = makeUnreachable(install.id);
    try {
      await h.app.jobs.runDue();
      const [render] = await f.renders(install.id);
      assert.equal(render.state, 'running');
      assert.equal(render.message, 'Rendering');
    } finally {
      unreachable.restore();
    }
    h.clock.advanceSeconds(5);
    await h.app.jobs.runDue();
    assert.equal((await f.renders(install.id))[0].state, 'succeeded');
  });

  test('after the last attempt a render that cannot reach git is failed', async () => {
    const { install } = await f.installed();
    const unreachable = makeUnreachable(install.id);
    try {
      for (let i = 0; i < 5; i++) {
        await h.app.jobs.runDue();
        h.clock.advanceSeconds(600);
      }
      const [render] = await f.renders(install.id);
      assert.equal(render.state, 'failed');
      assert.match(render.message, /^Gave up after 5 attempts/);
      const op = await f.ok('GET', `/v1/operations/${render.operation_id}`);
      assert.equal(op.error.code, 7399);
      assert.doesNotMatch(`${op.error.message} ${render.message}`, new RegExp(h.config.dataDir), 'no server path reaches the caller');
    } finally {
      unreachable.restore();
    }
  });

  test('the repository is made after the install commits: a failed commit leaves none behind', async () => {
    const pkg = await f.createPackage();
    const v1 = await f.publish(pkg.id, '1.0.0', { 'hello.txt': 'Hello {{who}}\n' });
    const name = f.unique('orphan');
    // The database refuses the transaction at COMMIT, after every statement of it succeeded.
    const probe = await failAtCommit(h.database, 'installs', `new.name = '${name}'`);
    try {
      const res = await f.call('POST', '/v1/installs', { name, package_id: pkg.id, version_id: v1.id, values: { who: 'x' } });
      assert.equal(res.statusCode, 500, res.body);
    } finally {
      await probe.remove();
    }
    const installs = await h.database.db.selectFrom('installs').select('id').where('name', '=', name).execute();
    assert.equal(installs.length, 0);
    const repos = fs.existsSync(repoRoot(h.config)) ? fs.readdirSync(repoRoot(h.config)) : [];
    const known = new Set((await h.database.db.selectFrom('installs').select('id').execute()).map((r) => `${r.id}.git`));
    // Dot files are the volume's own (its marker, src/git/volume.ts), not repositories.
    assert.deepEqual(
      repos.filter((d) => !d.startsWith('.') && !known.has(d)),
      [],
      'no repository without its install',
    );
    // The same request again works.
    const again = await f.call('POST', '/v1/installs', { name, package_id: pkg.id, version_id: v1.id, values: { who: 'x' } });
    assert.equal(again.statusCode, 201, again.body);
    assert.ok(fs.existsSync(f.repoPath(again.json().id)));
  });

  test('an install whose repository was not made (the process died after the commit) gets it from its first render', async () => {
    const { install } = await f.installed();
    fs.rmSync(f.repoPath(install.id), { recursive: true });
    await h.app.jobs.runDue();
    const [render] = await f.renders(install.id);
    assert.equal(render.state, 'succeeded');
    assert.equal(f.git(install.id, 'rev-parse', 'refs/heads/main'), render.commit_sha);
    assert.equal(f.git(install.id, 'show', 'refs/heads/main:hello.txt'), 'Hello world v1');
  });

  test('the repository of an install with commits is never made again empty (history would be lost)', async () => {
    const { install, v2 } = await f.installed();
    await h.app.jobs.runDue();
    const repo = f.repoPath(install.id);
    fs.renameSync(repo, `${repo}.away`);
    try {
      await f.patch(install.id, { desired_version_id: v2.id });
      await h.app.jobs.runDue();
      const [render] = await f.renders(install.id);
      assert.equal(render.state, 'running', 'retried later, not committed on an empty repository');
      assert.equal(fs.existsSync(repo), false);
    } finally {
      fs.renameSync(`${repo}.away`, repo);
    }
    h.clock.advanceSeconds(5);
    await h.app.jobs.runDue();
    assert.equal((await f.renders(install.id))[0].state, 'succeeded');
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '2');
  });
});
