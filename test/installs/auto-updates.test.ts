import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';
import { RENDER_RUN } from '../../src/installs/job-kinds.js';

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

describe('automatic updates', () => {
  test('a newer version moves installs that follow updates and renders them; others stay', async () => {
    const pkg = await f.createPackage();
    const v1 = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'one {{x}}' });
    const follows = await f.createInstall({ package_id: pkg.id, version_id: v1.id, values: { x: 'f' }, automatic_updates_enabled: true });
    const pinned = await f.createInstall({ package_id: pkg.id, version_id: v1.id, values: { x: 'p' } });
    await h.app.jobs.runDue();

    const v2 = await f.publish(pkg.id, '1.1.0', { 'a.txt': 'two {{x}}' });
    await h.app.jobs.runDue();
    const moved = await f.getInstall(follows.id);
    assert.deepEqual(moved.desired_version, { id: v2.id, semver: '1.1.0' });
    assert.deepEqual(moved.current_version, { id: v2.id, semver: '1.1.0' });
    assert.equal(f.git(follows.id, 'show', 'refs/heads/main:a.txt'), 'two f');
    assert.equal((await f.renders(follows.id)).length, 2);
    const still = await f.getInstall(pinned.id);
    assert.deepEqual([still.desired_version.id, (await f.renders(pinned.id)).length], [v1.id, 1]);
  });

  test('pre-releases and versions lower than the desired one are not followed', async () => {
    const pkg = await f.createPackage();
    const v2 = await f.publish(pkg.id, '2.0.0', { 'a.txt': 'x' });
    const inst = await f.createInstall({ package_id: pkg.id, version_id: v2.id, automatic_updates_enabled: true });
    await h.app.jobs.runDue();
    const before = await f.getInstall(inst.id);
    await f.publish(pkg.id, '3.0.0-rc.1', { 'a.txt': 'rc' });
    await f.publish(pkg.id, '1.9.9', { 'a.txt': 'old' });
    await h.app.jobs.runDue();
    const now = await f.getInstall(inst.id);
    assert.equal(now.desired_version.id, v2.id);
    assert.equal(now.etag, before.etag);
    assert.equal((await f.renders(inst.id)).length, 1);
  });

  test('turning automatic updates on does not by itself move to the newest version', async () => {
    const pkg = await f.createPackage();
    const v1 = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'x' });
    await f.publish(pkg.id, '1.0.1', { 'a.txt': 'y' });
    const inst = await f.createInstall({ package_id: pkg.id, version_id: v1.id });
    await h.app.jobs.runDue();
    await f.patch(inst.id, { automatic_updates_enabled: true });
    await h.app.jobs.runDue();
    assert.equal((await f.getInstall(inst.id)).desired_version.id, v1.id);
    assert.equal((await f.renders(inst.id)).length, 1);
  });

  test("an update's renders are claimed at most the workspace's share (WSP_RENDERS_PER_WORKSPACE) at once, grouped by workspace", async () => {
    // In the default slots, the renders a package update queued (one workspace's, one after another)
    // filled all four slots, two of them only to wait for one of the workspace's render threads.
    const { db } = h.database;
    const share = h.config.renders.perWorkspace;
    const pkg = await f.createPackage();
    const v1 = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'one {{x}}' });
    const installs = [];
    for (let i = 0; i < 6; i++) installs.push(await f.createInstall({ package_id: pkg.id, version_id: v1.id, values: { x: `i${i}` }, automatic_updates_enabled: true }));
    await h.app.jobs.runDue();
    const v2 = await f.publish(pkg.id, '1.1.0', { 'a.txt': 'two {{x}}' });

    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const row = await db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('kind', '=', RENDER_RUN)
          .where('state', '=', 'running')
          .executeTakeFirstOrThrow();
        most = Math.max(most, Number(row.n));
        await new Promise((r) => setImmediate(r));
      }
    })();
    h.app.jobs.start();
    try {
      for (;;) {
        const moved = await Promise.all(installs.map(async (i) => (await f.getInstall(i.id)).current_version?.id === v2.id));
        if (moved.every(Boolean)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      sampling = false;
      await sampler;
      await h.app.jobs.stop();
    }
    assert.ok(most >= 1, 'the sampler saw the renders run');
    assert.ok(most <= share, `at most ${share} of the workspace's renders claimed at once, saw ${most}`);
    const groups = await db.selectFrom('jobs').select('group_key').distinct().where('kind', '=', RENDER_RUN).execute();
    assert.deepEqual(
      groups.map((g) => g.group_key),
      [s.workspaceId],
    );
    for (const i of installs) assert.equal((await f.renders(i.id)).length, 2);
  });
});
