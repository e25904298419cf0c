import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Repository change requests at their edges (issue 51.5; docs/spec-gaps.md, "Repository change
 * requests"):
 * - a merge while a newer render arrives: once the newer render has opened its own change request,
 *   the older one is superseded and its merge is 409 (with the etag read before, and with the etag
 *   read after), and nothing moves: `main`, `current_version`, the renders and the refs stay as the
 *   newer render left them. The merge and the newer render's job at once: whichever wins, the
 *   rows and `main` agree (checked on every outcome);
 * - an install deleted while a change request is open: the deletion closes it (its render
 *   `canceled`, the event `repository_change_request.closed`), and it stays readable by id.
 */
const h = useTestApp();
const s = h.seeded;
const f = installFixture(h, s);

type Who = 'owner' | 'admin' | 'member';
const send = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({ method, url, headers: as(s[who].session, s.workspaceId, headers), ...(payload === undefined ? {} : { payload: payload as object }) });
async function ok<T = any>(who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await send(who, method, url, payload, headers);
  assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json<T>();
}
const cr = (id: string) => ok('owner', 'GET', `/v1/repository_change_requests/${id}`);
const merge = (id: string, etag: string, body: Record<string, unknown> = {}) => send('admin', 'POST', `/v1/repository_change_requests/${id}:merge`, body, { 'if-match': etag });
const mainOf = (installId: string) => f.git(installId, 'rev-parse', 'refs/heads/main');

/** An install of 1.0.0 under review (no approval required) and change request 1 (to 2.0.0), opened by the owner. */
async function openFirst() {
  const x = await f.installed();
  await h.app.jobs.runDue();
  const got = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
  await ok('owner', 'PATCH', `/v1/installs/${x.install.id}`, { delivery: 'change_request', required_approvals: 0 }, { 'if-match': got.etag });
  const render = await patchRender(x.install.id, { desired_version_id: x.v2.id });
  await h.app.jobs.runDue();
  const first = await cr((await f.getRender(render)).repository_change_request_id);
  assert.equal(first.state, 'open');
  return { ...x, main: mainOf(x.install.id), first, firstRender: render };
}
/** A PATCH that queues a render (not run): its id. */
async function patchRender(installId: string, body: Record<string, unknown>): Promise<string> {
  const { etag } = await ok('owner', 'GET', `/v1/installs/${installId}`);
  return (await ok('owner', 'PATCH', `/v1/installs/${installId}`, body, { 'if-match': etag })).last_render.id;
}

describe('a merge while a newer render arrives', () => {
  test('the newer render has opened its change request: the merge of the superseded one is 409 with the etag read before and after, and nothing moves', async () => {
    const x = await openFirst();
    // The newer render arrives (a PATCH of the values) and its job opens change request 2.
    const newer = await patchRender(x.install.id, { values: { who: 'newer' } });
    await h.app.jobs.runDue();
    const second = await cr((await f.getRender(newer)).repository_change_request_id);
    assert.equal(second.number, 2);
    const installBefore = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);

    // The reviewer merges what they read before: the etag and the head of change request 1.
    const stale = await merge(x.first.id, x.first.etag, { head_commit_sha: x.first.head_commit_sha });
    assert.equal(stale.statusCode, 409, stale.body);
    assert.equal(firstError(stale.json()).code, 7030, 'the etag moved when it was superseded');
    // Read again, it says superseded; a merge with that etag is refused for what it is.
    const now = await cr(x.first.id);
    assert.equal(now.state, 'superseded');
    assert.equal(now.mergeable, false);
    assert.deepEqual(now.merge_blockers, ['not_open']);
    const fresh = await merge(x.first.id, now.etag);
    assert.equal(fresh.statusCode, 409, fresh.body);
    assert.equal(firstError(fresh.json()).code, 7331);
    assert.equal(firstError(fresh.json()).metadata?.merge_blockers, 'not_open');

    // Nothing moved: main, current_version, the install, both renders, both change requests, the refs.
    assert.equal(mainOf(x.install.id), x.main);
    const installAfter = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
    assert.equal(installAfter.current_version.id, x.v1.id);
    assert.equal(installAfter.etag, installBefore.etag);
    assert.equal(installAfter.open_change_request_id, second.id);
    assert.equal((await f.getRender(x.firstRender)).state, 'superseded');
    assert.equal((await f.getRender(x.firstRender)).commit_sha, null);
    assert.equal((await f.getRender(newer)).state, 'awaiting_merge');
    assert.deepEqual(await cr(x.first.id), now, 'the refused merges changed nothing of change request 1');
    assert.deepEqual(await cr(second.id), second);
    assert.equal(second.base_commit_sha, x.main);
    assert.equal(f.git(x.install.id, 'rev-parse', 'refs/changes/1'), x.first.head_commit_sha);
    assert.equal(f.git(x.install.id, 'rev-parse', 'refs/changes/2'), second.head_commit_sha);
    const types = (await ok('owner', 'GET', `/v1/audit_events?resource_id=${x.first.id}&limit=50`)).data.map((e: { type: string }) => e.type);
    assert.deepEqual(types, ['repository_change_request.superseded', 'repository_change_request.opened'], 'no merged event');

    // The newer one merges: main moves once, to its head.
    const merged = await merge(second.id, second.etag);
    assert.equal(merged.statusCode, 200, merged.body);
    assert.equal(mainOf(x.install.id), second.head_commit_sha);
    assert.equal(f.git(x.install.id, 'rev-parse', `${second.head_commit_sha}^`), x.main);
    assert.equal(f.git(x.install.id, 'fsck', '--strict', '--no-dangling', '--no-progress'), '');
  });

  test('the newer render queued but not yet run: the merge wins, and the newer render then opens its change request on the merged head', async () => {
    const x = await openFirst();
    const newer = await patchRender(x.install.id, { values: { who: 'later' } });
    assert.equal((await f.getRender(newer)).state, 'queued');
    // A queued render supersedes nothing yet: change request 1 is open and its merge lands.
    const merged = await merge(x.first.id, x.first.etag);
    assert.equal(merged.statusCode, 200, merged.body);
    assert.equal(mainOf(x.install.id), x.first.head_commit_sha);
    await h.app.jobs.runDue();
    const second = await cr((await f.getRender(newer)).repository_change_request_id);
    assert.equal(second.state, 'open');
    assert.equal(second.base_commit_sha, x.first.head_commit_sha, 'built on the merged head');
    assert.equal((await cr(x.first.id)).state, 'merged', 'a merged change request is never superseded');
    assert.equal((await f.getRender(x.firstRender)).state, 'succeeded');
    assert.equal((await ok('owner', 'GET', `/v1/installs/${x.install.id}`)).current_version.id, x.v2.id);
    assert.equal(mainOf(x.install.id), x.first.head_commit_sha, 'main stays at the merged head');
  });

  test('the merge and the newer render’s job at once: whichever wins, main, current_version, the renders and the change requests agree', async () => {
    const seen = new Map<string, number>();
    for (let round = 0; round < 6; round++) {
      const x = await openFirst();
      const newer = await patchRender(x.install.id, { values: { who: `race-${round}` } });
      // Even rounds send the merge with the job's start; odd ones once the job has written the
      // render's tree and measured the repository (the step right before its transaction).
      const bytes = () => h.database.db.selectFrom('installs').select('repository_bytes').where('id', '=', x.install.id).executeTakeFirstOrThrow();
      const measured = (await bytes()).repository_bytes;
      const job = h.app.jobs.runDue();
      if (round % 2 === 1) await waitFor('the newer render measured', async () => (await bytes()).repository_bytes !== measured, { intervalMs: 0 });
      const [answer] = await Promise.all([merge(x.first.id, x.first.etag), job]);
      // The render's job may have found the branch locked by the merge's own move (git's ref
      // lock): it is tried again after its backoff (the test's clock moved past it), as the runner would.
      const newerRender = await waitFor(`render ${newer} done`, async () => {
        await h.app.jobs.runDue();
        const r = await f.getRender(newer);
        if (!['queued', 'running'].includes(r.state)) return r;
        h.clock.advanceSeconds(60);
        return null;
      });
      const first = await cr(x.first.id);
      const second = await cr(newerRender.repository_change_request_id);
      const install = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
      assert.equal(second.state, 'open', 'the newer render always opens its change request');
      assert.equal(newerRender.state, 'awaiting_merge');
      assert.equal(install.open_change_request_id, second.id);
      if (answer.statusCode === 200) {
        // The merge first: the newer render built on the merged head and superseded nothing.
        seen.set('merge first', (seen.get('merge first') ?? 0) + 1);
        assert.equal(first.state, 'merged');
        assert.equal(mainOf(x.install.id), x.first.head_commit_sha);
        assert.equal(second.base_commit_sha, x.first.head_commit_sha);
        assert.equal(install.current_version.id, x.v2.id);
        const r1 = await f.getRender(x.firstRender);
        assert.deepEqual([r1.state, r1.commit_sha], ['succeeded', x.first.head_commit_sha]);
      } else {
        // The newer render first: change request 1 superseded, the merge refused, nothing moved.
        seen.set('render first', (seen.get('render first') ?? 0) + 1);
        assert.equal(answer.statusCode, 409, answer.body);
        assert.equal(firstError(answer.json()).code, 7030);
        assert.equal(first.state, 'superseded');
        assert.equal(mainOf(x.install.id), x.main);
        assert.equal(second.base_commit_sha, x.main);
        assert.equal(install.current_version.id, x.v1.id);
        const r1 = await f.getRender(x.firstRender);
        assert.deepEqual([r1.state, r1.commit_sha], ['superseded', null]);
      }
      assert.equal(f.git(x.install.id, 'rev-parse', `${second.head_commit_sha}^`), mainOf(x.install.id), 'the open change request is a fast-forward of main');
      assert.equal(f.git(x.install.id, 'fsck', '--strict', '--no-dangling', '--no-progress'), '');
    }
    process.stderr.write(`# merge vs newer render: ${[...seen].map(([k, n]) => `${k} ×${n}`).join(', ')}\n`);
  });
});

describe('an install deleted with an open change request', () => {
  test('the deletion closes it: closed, its render canceled, the closed event by the deleter; it stays readable, and every write to it is 404', async () => {
    const x = await openFirst();
    const { etag } = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
    const deleted = await send('admin', 'DELETE', `/v1/installs/${x.install.id}`, undefined, { 'if-match': etag });
    assert.equal(deleted.statusCode, 202, deleted.body);

    const closed = await cr(x.first.id);
    assert.equal(closed.state, 'closed');
    assert.equal(typeof closed.closed_at, 'number');
    assert.notEqual(closed.etag, x.first.etag);
    assert.equal(closed.mergeable, false);
    assert.equal((await f.getRender(x.firstRender)).state, 'canceled');
    const listed = await ok('owner', 'GET', `/v1/repository_change_requests?install_id=${x.install.id}&state=open`);
    assert.deepEqual(listed.data, [], 'no open change request is left');
    const events = (await ok('owner', 'GET', `/v1/audit_events?resource_id=${x.first.id}&limit=50`)).data;
    assert.equal(events[0].type, 'repository_change_request.closed');
    assert.equal(events[0].actor.id, s.admin.userId);
    assert.equal(events[0].data.install_deleted, true);

    for (const verb of ['merge', 'reopen', 'approve', 'close']) {
      const res = await send('member', 'POST', `/v1/repository_change_requests/${x.first.id}:${verb}`, verb === 'merge' ? {} : undefined, { 'if-match': closed.etag });
      assert.equal(res.statusCode, 404, `${verb}: ${res.body}`);
    }
    const diff = await send('owner', 'GET', `/v1/repository_change_requests/${x.first.id}/diff`);
    assert.equal(diff.statusCode, 404);
  });
});
