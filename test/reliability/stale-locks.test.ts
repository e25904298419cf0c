import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from '../installs/fixture.js';
import { GitStorage } from '../../src/git/git-storage.js';
import { repoRoot } from '../../src/config.js';

/**
 * Issue 9.4: a crash of the whole machine or container in the middle of `git update-ref` leaves
 * `refs/heads/main.lock` behind, and git never removes such a file itself. A ref lock is held for
 * milliseconds, so one older than ten seconds is a dead writer's: it is cleared and the render goes
 * on. A fresh lock is another writer's and is respected.
 */
let f: ReturnType<typeof installFixture>;
const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

function plantLock(installId: string, ageSeconds: number): string {
  const lock = path.join(f.repoPath(installId), 'refs', 'heads', 'main.lock');
  fs.writeFileSync(lock, `${'0'.repeat(40)}\n`);
  const t = new Date(Date.now() - ageSeconds * 1000);
  fs.utimesSync(lock, t, t);
  return lock;
}

test('a stale lock on main left by a killed writer is cleared, and the render commits', async () => {
  const { install } = await f.installed();
  await h.app.jobs.runDue();
  const lock = plantLock(install.id, 300);
  await f.patch(install.id, { values: { who: 'after the crash' } });
  await h.app.jobs.runDue();
  const [newest] = await f.renders(install.id);
  assert.equal(newest.state, 'succeeded', newest.message);
  assert.equal(f.git(install.id, 'show', `${newest.commit_sha}:hello.txt`), 'Hello after the crash v1');
  assert.equal(fs.existsSync(lock), false);
  f.git(install.id, 'fsck', '--strict', '--no-dangling');
});

test('a fresh lock is another writer at work: advanceMain leaves it alone and reports the lost race', async () => {
  const repos = new GitStorage(repoRoot(h.config));
  const { install } = await f.installed();
  await h.app.jobs.runDue();
  const head = (await repos.head(install.id))!;
  const next = await repos.commit(install.id, { tree: await repos.treeOf(install.id, head), parent: head, message: 'next\n', timeSeconds: 1 });
  const lock = plantLock(install.id, 0);
  assert.equal(await repos.advanceMain(install.id, next, head), false);
  assert.equal(fs.existsSync(lock), true, 'the lock was left alone');
  assert.equal(await repos.head(install.id), head);
  // Eight seconds old: still respected. Eleven: a dead writer's (the lock is held for under a
  // millisecond by a live one; a process killed holding it must not block renders for long).
  const aged = (seconds: number) => fs.utimesSync(lock, new Date(Date.now() - seconds * 1000), new Date(Date.now() - seconds * 1000));
  aged(8);
  assert.equal(await repos.advanceMain(install.id, next, head), false);
  aged(11);
  assert.equal(await repos.advanceMain(install.id, next, head), true);
  assert.equal(await repos.head(install.id), next);
  assert.equal(fs.existsSync(lock), false);
});
