import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';

/**
 * The git command line is the judge: a listening server, an install rendered at v1, updated to
 * v2 and restored to v1, then `git clone <clone_url>` over HTTP with the credentials of
 * docs/spec-gaps.md, "Credentials and tokens". git runs as a child process (asynchronously: the server is in this process).
 */
let f: ReturnType<typeof installFixture>;
let work: string;
let history: { installId: string; cloneUrl: string; head: string; renders: { id: string; commit_sha: string }[]; v1Tree: string };

/** WSP_PUBLIC_URL (and so the clone URL), known before the app is built, forwarded to where it listens (port 0). */
let front: PublicAddress;

interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** git with no user or system configuration, no credential helper and no prompt. */
function git(args: string[], cwd = work): Promise<GitRun> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-c', 'credential.helper=', ...args],
      {
        cwd,
        env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
        timeout: 60_000,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr: stderr.trim() }),
    );
  });
}

async function gitOk(args: string[], cwd = work): Promise<string> {
  const res = await git(args, cwd);
  assert.equal(res.code, 0, `git ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}

const bearer = (credential: string) => ['-c', `http.extraHeader=Authorization: Bearer ${credential}`];
const context = (workspaceId: string) => ['-c', `http.extraHeader=Service-Context: ${workspaceId}`];
let clones = 0;
const target = () => path.join(work, `clone-${++clones}`);

const h = useTestApp(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-clone-'));
  front = await publicAddress();
  return {
    config: { publicUrl: front.url },
    setup: async () => {
      f = installFixture(h, s);
      front.forwardTo(await h.app.listen({ port: 0, host: '127.0.0.1' }));

      // install → render v1 → update to v2 → restore v1: three commits on main.
      const x = await f.installed();
      await h.app.jobs.runDue();
      await f.patch(x.install.id, { desired_version_id: x.v2.id, values: { who: 'moon' } });
      await h.app.jobs.runDue();
      const [second, first] = await f.renders(x.install.id);
      assert.deepEqual([first.state, second.state], ['succeeded', 'succeeded']);
      const restored = await f.restore(x.install.id, first.id, (await f.getInstall(x.install.id)).etag);
      assert.equal(restored.statusCode, 200, restored.body);
      await h.app.jobs.runDue();
      const third = await f.getRender(restored.json().render.id);
      assert.equal(third.state, 'succeeded');
      const repo = await f.ok('GET', `/v1/installs/${x.install.id}/repository`);
      history = {
        installId: x.install.id,
        cloneUrl: repo.clone_url,
        head: repo.head_commit_sha,
        renders: [first, second, third],
        v1Tree: f.git(x.install.id, 'rev-parse', `${first.commit_sha}^{tree}`),
      };
    },
    teardown: async () => {
      await front?.close();
    },
  };
});
const s = h.seeded;
after(async () => {
  fs.rmSync(work, { recursive: true, force: true });
});

describe('git clone over HTTP', () => {
  test("GET /v1/installs/{id}/repository: the head is the restore's commit and the clone URL is under WSP_PUBLIC_URL", () => {
    assert.equal(history.cloneUrl, `${h.config.publicUrl}/v1/installs/${history.installId}/repository.git`);
    assert.equal(history.head, history.renders[2]!.commit_sha);
  });

  test("a member's API token clones the whole history: fsck clean, every commit an ancestor of main, the tip holds v1's tree", async () => {
    const dir = target();
    await gitOk([...bearer(s.apiToken), 'clone', '--quiet', history.cloneUrl, dir]);
    assert.equal(await gitOk(['fsck', '--strict', '--no-dangling', '--no-progress'], dir), '');
    assert.equal(await gitOk(['rev-parse', 'main'], dir), history.head, 'GET .../repository names the head a clone gets');
    assert.equal(await gitOk(['rev-parse', 'HEAD'], dir), history.head, 'the clone checks out main');
    const log = (await gitOk(['log', '--format=%H', 'main'], dir)).split('\n');
    assert.deepEqual(log, history.renders.map((r) => r.commit_sha).reverse(), 'restore, v2, v1: nothing rewritten');
    for (const r of history.renders) assert.equal((await git(['merge-base', '--is-ancestor', r.commit_sha, 'main'], dir)).code, 0, r.id);
    assert.equal(await gitOk(['rev-parse', 'main^{tree}'], dir), history.v1Tree, "the tip's tree is the v1 render's");
    assert.equal(fs.readFileSync(path.join(dir, 'hello.txt'), 'utf8'), 'Hello world v1\n');
    assert.equal(fs.existsSync(path.join(dir, 'conf')), false, 'nothing of v2 is left in the tree');
    assert.equal(await gitOk(['log', '-1', '--format=%s', `${history.renders[1]!.commit_sha}`], dir), (await f.getRender(history.renders[1]!.id)).message);
  });

  test('protocol v0 and v2 clone the same; a later fetch brings a new commit', async () => {
    const v0 = target();
    const v2 = target();
    await gitOk([...bearer(s.apiToken), '-c', 'protocol.version=0', 'clone', '--quiet', '--bare', history.cloneUrl, v0]);
    await gitOk([...bearer(s.apiToken), '-c', 'protocol.version=2', 'clone', '--quiet', '--bare', history.cloneUrl, v2]);
    assert.equal(await gitOk(['rev-parse', 'main'], v0), history.head);
    assert.equal(await gitOk(['rev-parse', 'main'], v2), history.head);

    // A fetch negotiates with the clone's commits as haves.
    const x = await f.installed();
    await h.app.jobs.runDue();
    const url = (await f.ok('GET', `/v1/installs/${x.install.id}/repository`)).clone_url;
    const dir = target();
    await gitOk([...bearer(s.apiToken), 'clone', '--quiet', url, dir]);
    await f.patch(x.install.id, { values: { who: 'later' } });
    await h.app.jobs.runDue();
    const head = (await f.ok('GET', `/v1/installs/${x.install.id}/repository`)).head_commit_sha;
    await gitOk([...bearer(s.apiToken), 'fetch', '--quiet', 'origin'], dir);
    assert.equal(await gitOk(['rev-parse', 'origin/main'], dir), head);
    assert.equal(await gitOk(['show', 'origin/main:hello.txt'], dir), 'Hello later v1');
  });

  test('an install before its first commit clones empty', async () => {
    const x = await f.installed();
    const repo = await f.ok('GET', `/v1/installs/${x.install.id}/repository`);
    assert.equal(repo.head_commit_sha, null);
    const dir = target();
    const res = await git([...bearer(s.apiToken), 'clone', repo.clone_url, dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /empty repository/);
    assert.equal((await git(['rev-parse', '--verify', '--quiet', 'HEAD'], dir)).code, 1, 'no commit');
  });

  test('a session token needs Service-Context: with it the clone works, without it git gets 403', async () => {
    const dir = target();
    await gitOk([...bearer(s.member.session), ...context(s.workspaceId), 'clone', '--quiet', history.cloneUrl, dir]);
    assert.equal(await gitOk(['rev-parse', 'main'], dir), history.head);
    const refused = await git([...bearer(s.member.session), 'clone', history.cloneUrl, target()]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /403/);
  });

  test("nobody else: another workspace's token (404), a revoked token (401), no token (401)", async () => {
    const other = await h.seed('Other');
    const made = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'soon revoked' } });
    const revoked = made.json();
    const works = target();
    await gitOk([...bearer(revoked.token), 'clone', '--quiet', history.cloneUrl, works]);
    assert.equal((await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${revoked.id}`, headers: as(s.owner.session, s.workspaceId) })).statusCode, 204);

    const cases: [string, string[], number, number][] = [
      ["another workspace's token", bearer(other.apiToken), 404, 7002],
      ["another workspace's owner, naming their workspace", [...bearer(other.owner.session), ...context(other.workspaceId)], 404, 7002],
      ['a revoked token', bearer(revoked.token), 401, 7010],
      ['no token', [], 401, 7010],
    ];
    for (const [name, args, status, code] of cases) {
      const dir = target();
      const res = await git([...args, 'clone', history.cloneUrl, dir]);
      assert.notEqual(res.code, 0, `${name}: the clone must fail`);
      assert.equal(fs.existsSync(path.join(dir, 'hello.txt')), false, name);
      // What git was told, seen with a plain HTTP client.
      const headers: Record<string, string> = {};
      for (let i = 0; i < args.length; i += 2) {
        const [k, v] = args[i + 1]!.replace(/^http\.extraHeader=/, '').split(/: (.*)/s);
        headers[k!] = v!;
      }
      for (const [method, url, body] of [
        ['GET', `${history.cloneUrl}/info/refs?service=git-upload-pack`, undefined],
        ['POST', `${history.cloneUrl}/git-upload-pack`, '0000'],
      ] as const) {
        const answer = await fetch(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/x-git-upload-pack-request' } : {}) }, ...(body ? { body } : {}) });
        const text = await answer.text();
        assert.equal(answer.status, status, `${name}: ${method} ${url}: ${text}`);
        assert.equal(JSON.parse(text).errors[0].code, code, name);
        assert.ok(!text.includes(history.head) && !text.includes('hello'), `${name}: nothing of the repository`);
      }
    }
    const member = await fetch(`${history.cloneUrl}/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${s.apiToken}` } });
    assert.equal(member.status, 200, 'and the member still gets in');
  });

  test('a push is refused and the repository is unchanged', async () => {
    const dir = target();
    await gitOk([...bearer(s.apiToken), 'clone', '--quiet', history.cloneUrl, dir]);
    fs.writeFileSync(path.join(dir, 'hello.txt'), 'pushed over the platform\n');
    await gitOk(['-c', 'user.name=Mallory', '-c', 'user.email=m@example.test', 'commit', '--quiet', '-am', 'sneaky'], dir);
    const sneaky = await gitOk(['rev-parse', 'HEAD'], dir);
    const before = f.git(history.installId, 'for-each-ref', '--format=%(refname) %(objectname)');
    for (const extra of [[], [...bearer(s.member.session), ...context(s.workspaceId)]]) {
      const push = await git([...bearer(s.apiToken), ...extra, 'push', 'origin', 'HEAD:main'], dir);
      assert.notEqual(push.code, 0, 'the push fails');
      assert.match(push.stderr, /403/);
      const force = await git([...bearer(s.apiToken), 'push', '--force', 'origin', 'HEAD:refs/heads/other'], dir);
      assert.notEqual(force.code, 0);
    }
    const seen = await fetch(`${history.cloneUrl}/info/refs?service=git-receive-pack`, { headers: { authorization: `Bearer ${s.apiToken}` } });
    assert.equal(seen.status, 403);
    assert.equal((await seen.json()).errors[0].code, 7020);
    assert.equal(f.git(history.installId, 'for-each-ref', '--format=%(refname) %(objectname)'), before, 'no ref moved or appeared');
    assert.throws(() => f.git(history.installId, 'cat-file', '-e', sneaky), 'the pushed commit never reached the repository');
    assert.equal((await f.ok('GET', `/v1/installs/${history.installId}/repository`)).head_commit_sha, history.head);
  });
});

describe('git with the credential as a Basic password (issue 20)', () => {
  /** The clone URL with `user:password@` in it, as every git host accepts. */
  const withCredentials = (user: string, password: string) => history.cloneUrl.replace('://', `://${encodeURIComponent(user)}:${encodeURIComponent(password)}@`);

  test('an API token as the password of the URL, any user name: clone, then fetch with nothing more', async () => {
    const dir = target();
    await gitOk(['clone', '--quiet', withCredentials('anyone', s.apiToken), dir]);
    assert.equal(await gitOk(['rev-parse', 'main'], dir), history.head);
    assert.equal(await gitOk(['fsck', '--strict', '--no-dangling', '--no-progress'], dir), '');
    // The remote keeps the URL: a later fetch authenticates the same way, with no prompt.
    await gitOk(['fetch', '--quiet', 'origin'], dir);
    assert.equal(await gitOk(['rev-parse', 'origin/main'], dir), history.head);
  });

  test('a credential helper answering the challenge: git asks it after the 401 and clones', async () => {
    const dir = target();
    const helper = `!f() { test "$1" = get && echo username=ci && echo password=${s.apiToken}; }; f`;
    await gitOk(['-c', `credential.helper=${helper}`, 'clone', '--quiet', history.cloneUrl, dir]);
    assert.equal(await gitOk(['rev-parse', 'main'], dir), history.head);
  });

  test('a session names its workspace as the user name; without it, 403 as for a bearer session', async () => {
    const dir = target();
    await gitOk(['clone', '--quiet', withCredentials(s.workspaceId, s.member.session), dir]);
    assert.equal(await gitOk(['rev-parse', 'main'], dir), history.head);
    const refused = await git(['clone', withCredentials('me', s.member.session), target()]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /403/);
  });

  test('a wrong password is 401 with a Basic challenge; Basic anywhere but git is refused', async () => {
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const refs = `${history.cloneUrl}/info/refs?service=git-upload-pack`;
    const none = await fetch(refs);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Basic realm="Workspace Platform"/);
    const wrong = await fetch(refs, { headers: { authorization: basic('x', `${s.apiToken}x`) } });
    assert.equal(wrong.status, 401);
    assert.equal((await wrong.json()).errors[0].code, 7010);
    const garbled = await fetch(refs, { headers: { authorization: 'Basic !!!' } });
    assert.equal(garbled.status, 401);
    const right = await fetch(refs, { headers: { authorization: basic('x', s.apiToken) } });
    assert.equal(right.status, 200);
    const elsewhere = await fetch(`${history.cloneUrl.replace(/\/repository\.git$/, '')}`, { headers: { authorization: basic('x', s.apiToken) } });
    assert.equal(elsewhere.status, 401, 'the API itself takes bearer credentials only');
    assert.equal(elsewhere.headers.get('www-authenticate'), 'Bearer');
  });
});
