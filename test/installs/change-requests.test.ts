import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';

/**
 * Repository change requests (docs/spec-gaps.md, "Repository change requests"), through the API on a listening server and with
 * the real git client: an install under review keeps `main`, `current_version` and its history
 * where they are while a render waits on `refs/changes/<number>`; approvals, merge, close,
 * reopen, supersede and re-parent each move exactly what the contract says.
 */
let f: ReturnType<typeof installFixture>;
let front: PublicAddress;
let work: string;

const h = useTestApp(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-changes-'));
  front = await publicAddress();
  return {
    config: { publicUrl: front.url },
    setup: async () => {
      f = installFixture(h, s);
      front.forwardTo(await h.app.listen({ port: 0, host: '127.0.0.1' }));
    },
    teardown: async () => {
      await front?.close();
    },
  };
});
const s = h.seeded;
after(() => fs.rmSync(work, { recursive: true, force: true }));

type Who = 'owner' | 'admin' | 'member' | 'token';
const credential = (who: Who) => (who === 'token' ? s.apiToken : s[who].session);
async function send(who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}) {
  return h.app.inject({ method, url, headers: as(credential(who), s.workspaceId, headers), ...(payload === undefined ? {} : { payload: payload as object }) });
}
async function ok<T = any>(who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await send(who, method, url, payload, headers);
  assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json<T>();
}
const cr = (id: string) => ok('owner', 'GET', `/v1/repository_change_requests/${id}`);
/** A write to a change request with its current etag. */
async function act(who: Who, id: string, verb: string, payload?: unknown) {
  const { etag } = await cr(id);
  return send(who, 'POST', `/v1/repository_change_requests/${id}:${verb}`, payload, { 'if-match': etag });
}
const head = async (installId: string) => (await ok('owner', 'GET', `/v1/installs/${installId}/repository`)).head_commit_sha as string | null;

/** An install of v1 (landed directly) switched to review; the PATCH (by `who`) that follows opens a change request. */
async function reviewed(requiredApprovals = 1) {
  const x = await f.installed();
  await h.app.jobs.runDue();
  const got = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
  const switched = await ok('owner', 'PATCH', `/v1/installs/${x.install.id}`, { delivery: 'change_request', required_approvals: requiredApprovals }, { 'if-match': got.etag });
  assert.equal(switched.delivery, 'change_request');
  assert.equal(switched.required_approvals, requiredApprovals);
  assert.equal(switched.last_render.id, got.last_render.id, 'changing the delivery alone starts no render');
  return { ...x, main: (await head(x.install.id))! };
}
/** A PATCH by `who` that starts a render, run to its end: the render as it then is. */
async function change(who: Who, installId: string, body: Record<string, unknown>) {
  const { etag } = await ok(who, 'GET', `/v1/installs/${installId}`);
  const patched = await ok(who, 'PATCH', `/v1/installs/${installId}`, body, { 'if-match': etag });
  await h.app.jobs.runDue();
  return ok('owner', 'GET', `/v1/renders/${patched.last_render.id}`);
}

function git(args: string[], cwd = work): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-c', 'credential.helper=', ...args],
      { cwd, env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' }, timeout: 60_000, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr: stderr.trim() }),
    );
  });
}
async function gitOk(args: string[], cwd = work): Promise<string> {
  const res = await git(args, cwd);
  assert.equal(res.code, 0, `git ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}
const bearer = ['-c', `http.extraHeader=Authorization: Bearer `];
let clones = 0;

describe('repository change requests', () => {
  test("an install's first render lands directly even under review; `delivery` and `required_approvals` are set at creation and checked", async () => {
    const pkg = await f.createPackage();
    const v1 = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'a {{who}}\n' });
    const install = await ok('owner', 'POST', '/v1/installs', {
      name: f.unique('inst'),
      package_id: pkg.id,
      version_id: v1.id,
      values: { who: 'x' },
      delivery: 'change_request',
      required_approvals: 2,
    });
    assert.equal(install.delivery, 'change_request');
    assert.equal(install.required_approvals, 2);
    await h.app.jobs.runDue();
    const render = await f.getRender(install.last_render.id);
    assert.equal(render.state, 'succeeded');
    assert.equal(render.repository_change_request_id, null);
    assert.equal((await ok('owner', 'GET', `/v1/installs/${install.id}`)).open_change_request_id, null);
    const bad = await send('owner', 'POST', '/v1/installs', { name: f.unique('inst'), package_id: pkg.id, version_id: v1.id, required_approvals: 11 });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(firstError(bad.json()).path, ['body', 'required_approvals']);
    const direct = await ok('owner', 'POST', '/v1/installs', { name: f.unique('inst'), package_id: pkg.id, version_id: v1.id, values: { who: 'y' } });
    assert.equal(direct.delivery, 'direct');
    assert.equal(direct.required_approvals, 0);
  });

  test('a render under review opens change request 1 on refs/changes/1: main, current_version and the history stay; the operation names both', async () => {
    const x = await reviewed();
    const render = await change('owner', x.install.id, { desired_version_id: x.v2.id });
    assert.equal(render.state, 'awaiting_merge');
    assert.equal(render.commit_sha, null);
    assert.match(render.repository_change_request_id, /^rcr_[0-9a-z]{26}$/);
    const op = await ok('owner', 'GET', `/v1/operations/${render.operation_id}`);
    assert.equal(op.done, true);
    assert.deepEqual(op.result, { render_id: render.id, repository_change_request_id: render.repository_change_request_id });

    const install = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
    assert.equal(install.current_version.id, x.v1.id, 'current_version stays');
    assert.equal(install.open_change_request_id, render.repository_change_request_id, 'the install says a change waits');
    assert.equal(await head(x.install.id), x.main, 'main stays');

    const c = await cr(render.repository_change_request_id);
    assert.equal(c.number, 1);
    assert.equal(c.ref, 'refs/changes/1');
    assert.equal(c.state, 'open');
    assert.equal(c.render_id, render.id);
    assert.equal(c.author_id, s.owner.userId);
    assert.equal(c.base_commit_sha, x.main);
    assert.equal(c.title, `Update ${x.install.name} to 2.0.0`);
    assert.equal(c.description, '');
    assert.equal(c.mergeable, false);
    assert.deepEqual(c.merge_blockers, ['approvals_required']);
    assert.deepEqual(c.approvals, []);
    assert.deepEqual(c.diff_stats, { added: 1, modified: 1, removed: 0 });
    assert.deepEqual([c.merged_by, c.merged_at, c.closed_at], [null, null, null]);
    assert.equal(f.git(x.install.id, 'rev-parse', 'refs/changes/1'), c.head_commit_sha);
    assert.equal(f.git(x.install.id, 'rev-parse', `${c.head_commit_sha}^`), x.main, 'the head is built on main');

    const diff = await ok('owner', 'GET', `/v1/repository_change_requests/${c.id}/diff`);
    assert.deepEqual(diff.files, [
      { path: 'conf/app.yaml', status: 'added', before: null, after: 'name: world\n' },
      { path: 'hello.txt', status: 'modified', before: 'Hello world v1\n', after: 'Hello world v2\n' },
    ]);
  });

  test('git fetch origin refs/changes/<n> && git diff main FETCH_HEAD: the real client sees the change; fsck is clean', async () => {
    const x = await reviewed();
    const render = await change('owner', x.install.id, { desired_version_id: x.v2.id });
    const c = await cr(render.repository_change_request_id);
    const url = (await ok('owner', 'GET', `/v1/installs/${x.install.id}/repository`)).clone_url;
    const dir = path.join(work, `clone-${++clones}`);
    const auth = [bearer[0]!, `${bearer[1]}${s.apiToken}`];
    await gitOk([...auth, 'clone', '--quiet', url, dir]);
    assert.equal(fs.readFileSync(path.join(dir, 'hello.txt'), 'utf8'), 'Hello world v1\n', 'a clone still shows the old tree');
    for (const protocol of ['0', '2']) {
      await gitOk([...auth, '-c', `protocol.version=${protocol}`, 'fetch', '--quiet', 'origin', c.ref], dir);
      assert.equal(await gitOk(['rev-parse', 'FETCH_HEAD'], dir), c.head_commit_sha);
      const diff = await gitOk(['diff', 'main', 'FETCH_HEAD'], dir);
      assert.match(diff, /^-Hello world v1$/m);
      assert.match(diff, /^\+Hello world v2$/m);
      assert.match(diff, /^\+\+\+ b\/conf\/app\.yaml$/m);
    }
    const advertised = await gitOk([...auth, 'ls-remote', 'origin'], dir);
    assert.match(advertised, new RegExp(`^${c.head_commit_sha}\\trefs/changes/1$`, 'm'));
    assert.equal(await gitOk(['fsck', '--strict', '--no-dangling', '--no-progress'], dir), '');
  });

  test('approvals: a token 403, the author 403, a second member once (twice keeps one); merge moves main forward, the render and current_version', async () => {
    const x = await reviewed();
    const render = await change('owner', x.install.id, { desired_version_id: x.v2.id });
    const id = render.repository_change_request_id;

    const byToken = await act('token', id, 'approve');
    assert.equal(byToken.statusCode, 403);
    const byAuthor = await act('owner', id, 'approve');
    assert.equal(byAuthor.statusCode, 403);
    assert.equal(firstError(byAuthor.json()).code, 7333);

    const early = await act('admin', id, 'merge');
    assert.equal(early.statusCode, 409);
    assert.equal(firstError(early.json()).code, 7331);
    assert.equal(firstError(early.json()).metadata?.merge_blockers, 'approvals_required');

    const approved = await act('member', id, 'approve');
    assert.equal(approved.statusCode, 200, approved.body);
    assert.deepEqual(
      approved.json().approvals.map((a: { user_id: string }) => a.user_id),
      [s.member.userId],
    );
    assert.equal(approved.json().mergeable, true);
    assert.deepEqual(approved.json().merge_blockers, []);
    const again = await act('member', id, 'approve');
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().approvals.length, 1, 'approving twice keeps one approval');
    assert.equal(again.json().etag, approved.json().etag);

    const wrongHead = await act('admin', id, 'merge', { head_commit_sha: x.main });
    assert.equal(wrongHead.statusCode, 409);
    assert.equal(firstError(wrongHead.json()).code, 7332);
    assert.equal(firstError(wrongHead.json()).metadata?.head_commit_sha, approved.json().head_commit_sha);
    const stale = await send('admin', 'POST', `/v1/repository_change_requests/${id}:merge`, {}, { 'if-match': 'stale' });
    assert.equal(stale.statusCode, 409);
    assert.equal(await head(x.install.id), x.main, 'a refused merge moves nothing');

    const merged = await act('admin', id, 'merge', { head_commit_sha: approved.json().head_commit_sha });
    assert.equal(merged.statusCode, 200, merged.body);
    const m = merged.json();
    assert.equal(m.state, 'merged');
    assert.equal(m.merged_by, s.admin.userId);
    assert.equal(typeof m.merged_at, 'number');
    assert.equal(m.mergeable, false);
    assert.deepEqual(m.merge_blockers, ['not_open']);
    assert.equal(await head(x.install.id), m.head_commit_sha, 'main is at the head');
    assert.equal(f.git(x.install.id, 'rev-parse', `${m.head_commit_sha}^`), x.main, 'a fast-forward');
    const after = await f.getRender(render.id);
    assert.equal(after.state, 'succeeded');
    assert.equal(after.commit_sha, m.head_commit_sha);
    const install = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
    assert.equal(install.current_version.id, x.v2.id);
    assert.equal(install.open_change_request_id, null);
    assert.equal(f.git(x.install.id, 'rev-parse', 'refs/changes/1'), m.head_commit_sha, 'the ref is kept after the merge');
    assert.equal(f.git(x.install.id, 'fsck', '--strict', '--no-dangling', '--no-progress'), '');

    const again2 = await act('admin', id, 'merge');
    assert.equal(again2.statusCode, 409);
    assert.equal(firstError(again2.json()).code, 7331);
    assert.equal(firstError(again2.json()).metadata?.merge_blockers, 'not_open');

    const types = (await ok('owner', 'GET', `/v1/audit_events?resource_id=${id}&limit=50`)).data.map((e: { type: string }) => e.type);
    assert.deepEqual(types, ['repository_change_request.merged', 'repository_change_request.approved', 'repository_change_request.opened']);
    const notices = async (who: Who) =>
      ((await h.app.inject({ method: 'GET', url: '/v1/notifications', headers: as(credential(who)) })).json().data as { type: string; resource_id: string }[]).filter((n) => n.resource_id === id);
    assert.deepEqual(
      (await notices('admin')).map((n) => n.type),
      ['change_request_opened'],
    );
    assert.deepEqual(await notices('owner'), [], 'the author is not told of their own change');
    assert.deepEqual(await notices('member'), [], 'members are not told');
  });

  test('close cancels the render and leaves main; reopen brings it back; a newer render supersedes, and then reopen is 409', async () => {
    const x = await reviewed(0);
    const first = await change('member', x.install.id, { values: { who: 'two' } });
    const id = first.repository_change_request_id;
    assert.equal((await cr(id)).title, `Update the values of ${x.install.name} (1.0.0)`);
    const closed = await act('member', id, 'close');
    assert.equal(closed.statusCode, 200, closed.body);
    assert.equal(closed.json().state, 'closed');
    assert.equal(typeof closed.json().closed_at, 'number');
    assert.deepEqual(closed.json().merge_blockers, ['not_open']);
    assert.equal((await f.getRender(first.id)).state, 'canceled');
    assert.equal(await head(x.install.id), x.main);
    const closeAgain = await act('member', id, 'close');
    assert.equal(closeAgain.statusCode, 409);
    assert.equal(firstError(closeAgain.json()).code, 7330);

    const reopened = await act('member', id, 'reopen');
    assert.equal(reopened.statusCode, 200, reopened.body);
    assert.equal(reopened.json().state, 'open');
    assert.equal(reopened.json().closed_at, null);
    assert.equal(reopened.json().mergeable, true, 'no approvals required');
    assert.equal((await f.getRender(first.id)).state, 'awaiting_merge');
    const reopenOpen = await act('member', id, 'reopen');
    assert.equal(reopenOpen.statusCode, 409);
    assert.equal(firstError(reopenOpen.json()).code, 7335);

    // One open per install: a newer render supersedes it.
    const second = await change('member', x.install.id, { values: { who: 'three' } });
    const superseded = await cr(id);
    assert.equal(superseded.state, 'superseded');
    assert.equal((await f.getRender(first.id)).state, 'superseded');
    const c2 = await cr(second.repository_change_request_id);
    assert.equal(c2.number, 2);
    assert.equal(c2.state, 'open');
    const open = await ok('owner', 'GET', `/v1/repository_change_requests?install_id=${x.install.id}&state=open`);
    assert.deepEqual(
      open.data.map((c: { id: string }) => c.id),
      [c2.id],
    );

    // Closed, then a newer render: it can never be reopened.
    await act('member', c2.id, 'close');
    const third = await change('member', x.install.id, { values: { who: 'four' } });
    const late = await act('member', c2.id, 'reopen');
    assert.equal(late.statusCode, 409);
    assert.equal(firstError(late.json()).code, 7334);
    assert.equal(firstError(late.json()).metadata?.render_id, third.id);

    const all = await ok('owner', 'GET', `/v1/repository_change_requests?install_id=${x.install.id}&limit=2`);
    assert.deepEqual(
      all.data.map((c: { number: number }) => c.number),
      [3, 2],
      'newest first',
    );
    assert.equal(all.has_more, true);
    const rest = await ok('owner', 'GET', `/v1/repository_change_requests?install_id=${x.install.id}&limit=2&cursor=${all.next_cursor}`);
    assert.deepEqual(
      rest.data.map((c: { number: number }) => c.number),
      [1],
    );
    const types = (await ok('owner', 'GET', `/v1/audit_events?resource_id=${id}&limit=50`)).data.map((e: { type: string }) => e.type);
    assert.deepEqual(types, ['repository_change_request.superseded', 'repository_change_request.reopened', 'repository_change_request.closed', 'repository_change_request.opened']);
  });

  test('PATCH edits the title and description (If-Match); a token with installs:read only cannot', async () => {
    const x = await reviewed(0);
    const render = await change('owner', x.install.id, { values: { who: 'edit' } });
    const id = render.repository_change_request_id;
    const { etag } = await cr(id);
    const edited = await ok('member', 'PATCH', `/v1/repository_change_requests/${id}`, { title: 'Ship it', description: 'Reviewed by ops' }, { 'if-match': etag });
    assert.deepEqual([edited.title, edited.description], ['Ship it', 'Reviewed by ops']);
    assert.notEqual(edited.etag, etag);
    const stale = await send('member', 'PATCH', `/v1/repository_change_requests/${id}`, { title: 'x' }, { 'if-match': etag });
    assert.equal(stale.statusCode, 409);
    const empty = await send('member', 'PATCH', `/v1/repository_change_requests/${id}`, { title: '' }, { 'if-match': edited.etag });
    assert.equal(empty.statusCode, 422);
  });

  test('main moved under an open change request (an operator’s repair): it is re-parented, same tree, new base and etag; the merge is still a fast-forward', async () => {
    const x = await reviewed(0);
    const render = await change('owner', x.install.id, { desired_version_id: x.v2.id });
    const before = await cr(render.repository_change_request_id);
    // The repair: a commit on main made by hand in the bare repository.
    const tree = f.git(x.install.id, 'rev-parse', `${x.main}^{tree}`);
    const repair = f.git(x.install.id, '-c', 'user.name=op', '-c', 'user.email=op@example.com', 'commit-tree', tree, '-p', x.main, '-m', 'repair');
    f.git(x.install.id, 'update-ref', 'refs/heads/main', repair, x.main);
    const after = await cr(before.id);
    assert.equal(after.base_commit_sha, repair);
    assert.notEqual(after.head_commit_sha, before.head_commit_sha);
    assert.notEqual(after.etag, before.etag);
    assert.equal(f.git(x.install.id, 'rev-parse', `${after.head_commit_sha}^{tree}`), f.git(x.install.id, 'rev-parse', `${before.head_commit_sha}^{tree}`));
    assert.equal(f.git(x.install.id, 'rev-parse', `${after.head_commit_sha}^`), repair);
    assert.equal(f.git(x.install.id, 'rev-parse', 'refs/changes/1'), after.head_commit_sha);
    const stale = await send('owner', 'POST', `/v1/repository_change_requests/${before.id}:merge`, {}, { 'if-match': before.etag });
    assert.equal(stale.statusCode, 409, 'the etag changed with the head');
    const merged = await act('owner', before.id, 'merge');
    assert.equal(merged.statusCode, 200, merged.body);
    assert.equal(await head(x.install.id), after.head_commit_sha);
    assert.equal((await git(['merge-base', '--is-ancestor', repair, after.head_commit_sha], f.repoPath(x.install.id))).code, 0, 'main only moves forward');
    assert.equal(f.git(x.install.id, 'fsck', '--strict', '--no-dangling', '--no-progress'), '');
  });

  test('two merges at once: exactly one wins; a merge and a close at once: exactly one wins; main and the rows agree', async () => {
    for (const other of ['merge', 'close'] as const) {
      const x = await reviewed(0);
      const render = await change('owner', x.install.id, { values: { who: other } });
      const id = render.repository_change_request_id;
      const { etag, head_commit_sha } = await cr(id);
      const [a, b] = await Promise.all([
        send('owner', 'POST', `/v1/repository_change_requests/${id}:merge`, {}, { 'if-match': etag }),
        send('admin', 'POST', `/v1/repository_change_requests/${id}:${other}`, undefined, { 'if-match': etag }),
      ]);
      const codes = [a.statusCode, b.statusCode].sort();
      assert.deepEqual(codes, [200, 409], `${a.body} ${b.body}`);
      const final = await cr(id);
      const r = await f.getRender(render.id);
      if (final.state === 'merged') {
        assert.equal(await head(x.install.id), head_commit_sha);
        assert.equal(r.state, 'succeeded');
      } else {
        assert.equal(final.state, 'closed');
        assert.equal(await head(x.install.id), x.main);
        assert.equal(r.state, 'canceled');
      }
    }
  });

  test('switching delivery back to direct leaves the open change request open; the next render lands directly and supersedes it', async () => {
    const x = await reviewed(0);
    const render = await change('owner', x.install.id, { values: { who: 'waits' } });
    const got = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
    await ok('owner', 'PATCH', `/v1/installs/${x.install.id}`, { delivery: 'direct' }, { 'if-match': got.etag });
    assert.equal((await cr(render.repository_change_request_id)).state, 'open');
    const direct = await change('owner', x.install.id, { values: { who: 'direct' } });
    assert.equal(direct.state, 'succeeded');
    assert.equal(await head(x.install.id), direct.commit_sha);
    assert.equal((await cr(render.repository_change_request_id)).state, 'superseded');
  });

  test('a restore under review opens a change request at once (its operation done), and its merge lands the old tree', async () => {
    const x = await reviewed(0);
    const [first] = (await f.renders(x.install.id)).slice(-1);
    const second = await change('owner', x.install.id, { desired_version_id: x.v2.id });
    await act('owner', second.repository_change_request_id, 'merge');
    const { etag } = await ok('owner', 'GET', `/v1/installs/${x.install.id}`);
    const restored = await f.restore(x.install.id, first.id, etag);
    assert.equal(restored.statusCode, 200, restored.body);
    const render = restored.json().render;
    assert.equal(render.state, 'awaiting_merge');
    const c = await cr(render.repository_change_request_id);
    assert.equal(c.title, `Restore render ${first.id}`);
    assert.equal(c.number, 2);
    assert.deepEqual((await ok('owner', 'GET', `/v1/operations/${render.operation_id}`)).result, { render_id: render.id, repository_change_request_id: c.id });
    const merged = await act('owner', c.id, 'merge');
    assert.equal(merged.statusCode, 200, merged.body);
    assert.equal(f.git(x.install.id, 'rev-parse', 'main^{tree}'), f.git(x.install.id, 'rev-parse', `${first.commit_sha}^{tree}`));
    assert.equal((await ok('owner', 'GET', `/v1/installs/${x.install.id}`)).current_version.id, x.v1.id);
  });
});
