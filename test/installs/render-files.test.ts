import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp, type Schemas } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';

/** GET /v1/renders/{id}/files: the tree of a render's commit, judged against `git ls-tree` and `git show`. */
let f: ReturnType<typeof installFixture>;
const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

type Files = Schemas['RenderFiles'];

test("a render's files are its commit's tree, in path order, with their text and size", async () => {
  const { install, v2 } = await f.installed({ who: 'world' });
  await h.app.jobs.runDue();
  await f.patch(install.id, { desired_version_id: v2.id });
  await h.app.jobs.runDue();
  const [second, first] = await f.renders(install.id);
  const answer = await f.ok<Files>('GET', `/v1/renders/${second.id}/files`);
  assert.equal(answer.commit_sha, second.commit_sha);
  assert.deepEqual(
    answer.files.map((x) => x.path),
    f.git(install.id, 'ls-tree', '-r', '--name-only', second.commit_sha).split('\n'),
  );
  for (const file of answer.files) {
    const real = f.git(install.id, 'show', `${second.commit_sha}:${file.path}`);
    assert.equal(file.content?.trimEnd(), real);
    assert.equal(file.size, Buffer.byteLength(file.content));
  }
  assert.deepEqual(answer.files.find((x) => x.path === 'hello.txt')?.content, 'Hello world v2\n');
  const older = await f.ok<Files>('GET', `/v1/renders/${first.id}/files`);
  assert.deepEqual(
    older.files.map((x) => x.path),
    ['hello.txt'],
    'each render shows its own commit',
  );
});

test("a render without a commit is 409 (7305) with its state; another workspace's render is 404", async () => {
  const { install } = await f.installed();
  const [queued] = await f.renders(install.id);
  assert.equal(queued.state, 'queued');
  const res = await f.call('GET', `/v1/renders/${queued.id}/files`);
  assert.equal(res.statusCode, 409);
  assert.equal(firstError(res.json()).code, 7305);
  assert.deepEqual(firstError(res.json()).metadata, { state: 'queued' });
  await h.app.jobs.runDue();
  const other = await h.seed('Other');
  const foreign = await h.app.inject({ method: 'GET', url: `/v1/renders/${queued.id}/files`, headers: as(other.owner.session, other.workspaceId) });
  assert.equal(foreign.statusCode, 404);
});
