import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { testRunner } from '../helpers/jobs.js';
import type { JobRunner } from '../../src/jobs/runner.js';
import { JOB_KINDS } from '../../src/job-kinds.js';
import { GitStorage } from '../../src/git/git-storage.js';
import { renderJobs } from '../../src/installs/renders/jobs.js';
import { commitMessage } from '../../src/installs/renders/commit-message.js';
import { repoRoot } from '../../src/config.js';
import { EventLog } from '../../src/events/record.js';
import { installFixture } from './fixture.js';

let f: ReturnType<typeof installFixture>;
/** A second worker on the same database and repositories: another server instance. */
let other: JobRunner;

const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
    other = testRunner(h.database, h.clock, JOB_KINDS, { workerId: 'other-instance' });
    other.define(renderJobs({ db: h.database.db, clock: h.clock, log: pino({ level: 'silent' }), config: h.config, events: new EventLog(h.clock), repos: new GitStorage(repoRoot(h.config)) }));
  },
});
const s = h.seeded;

async function rendered() {
  const x = await f.installed();
  await h.app.jobs.runDue();
  await f.patch(x.install.id, { desired_version_id: x.v2.id, values: { who: 'moon' } });
  await h.app.jobs.runDue();
  const [second, first] = await f.renders(x.install.id);
  return { ...x, first, second, install: await f.getInstall(x.install.id) };
}

const runBoth = () => Promise.all([h.app.jobs.runDue(), other.runDue()]);

describe('concurrent renders and restores on one install', () => {
  test('restores, PATCHes and two workers at once: no commit is lost and none is invented', async () => {
    const { install, first, second } = await rendered();
    const url = `/v1/installs/${install.id}`;
    const writes = [
      ...Array.from({ length: 6 }, (_, i) => f.restore(install.id, i % 2 ? first.id : second.id, '*')),
      ...Array.from({ length: 4 }, (_, i) => f.call('PATCH', url, { values: { who: `p${i}` } }, { 'if-match': '*' })),
    ];
    const [answers] = await Promise.all([Promise.all(writes), runBoth(), runBoth()]);
    for (const a of answers) assert.equal(a.statusCode, 200, a.body);
    await runBoth();

    const renders = await f.renders(install.id);
    assert.equal(renders.length, 12);
    for (const r of renders) assert.ok(['succeeded', 'superseded'].includes(r.state), `${r.id} is ${r.state}`);
    const committed = renders.filter((r) => r.commit_sha !== null);
    const chain = f.git(install.id, 'rev-list', 'refs/heads/main').split('\n');
    assert.deepEqual(new Set(chain), new Set(committed.map((r) => r.commit_sha)), 'main holds exactly the committed renders');
    assert.equal(chain.length, committed.length);
    // Renders reach the branch in the order they were made: newest first on main.
    assert.deepEqual(
      chain,
      committed.map((r) => r.commit_sha),
    );
    f.git(install.id, 'fsck', '--strict', '--no-dangling');
    const newest = committed[0];
    const now = await f.getInstall(install.id);
    assert.equal(now.current_version.id, newest.package_version_id, 'current_version is the version on top of main');
    assert.equal(f.git(install.id, 'rev-parse', 'refs/heads/main^{tree}'), f.git(install.id, 'rev-parse', `${newest.commit_sha}^{tree}`));
  });

  test('of concurrent restores with the same If-Match exactly one wins; the others are 409 and commit nothing', async () => {
    const { install, first } = await rendered();
    const answers = await Promise.all(Array.from({ length: 5 }, () => f.restore(install.id, first.id, install.etag)));
    const won = answers.filter((a) => a.statusCode === 200);
    assert.equal(won.length, 1);
    for (const a of answers.filter((x) => x.statusCode !== 200)) {
      assert.equal(a.statusCode, 409);
      assert.equal(firstError(a.json()).code, 7030);
    }
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '3');
  });

  test('a render whose commit landed but whose database write was lost adopts that commit on its retry', async () => {
    const { install, pkg, v1 } = await f.installed();
    const [render] = await f.renders(install.id);
    // What the lost attempt left behind: its commit on main, the render still not succeeded.
    const repos = new GitStorage(repoRoot(h.config));
    const tree = await repos.writeTree(install.id, [{ path: 'hello.txt', content: Buffer.from('Hello world v1\n') }]);
    const message = commitMessage({ renderId: render.id, installId: install.id, packageName: pkg.name, semver: '1.0.0', versionId: v1.id });
    const lost = await repos.commit(install.id, { tree, parent: null, message, timeSeconds: 1 });
    assert.equal(await repos.advanceMain(install.id, lost, null), true);
    await runBoth();
    const done = await f.getRender(render.id);
    assert.equal(done.state, 'succeeded');
    assert.equal(done.commit_sha, lost);
    assert.equal(f.git(install.id, 'rev-list', '--count', 'refs/heads/main'), '1', 'no second commit of the same render');
  });
});
