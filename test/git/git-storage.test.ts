import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { GitStorage } from '../../src/git/git-storage.js';
import { appendCommit } from '../../src/git/append-commit.js';
import { objectId, parseCommit } from '../../src/git/objects.js';
import { gitProcessesStarted } from '../../src/git/run-git.js';
import { loadConfig, repoRoot } from '../../src/config.js';

let root: string;
let repos: GitStorage;
let n = 0;
const nextId = () => `inst_${String(++n).padStart(26, '0')}`;
const gitCli = (id: string, args: string[], input: Buffer) =>
  execFileSync('git', args, { input, env: { PATH: process.env.PATH, GIT_DIR: repos.pathOf(id), GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' }).trim();
const git = (id: string, ...args: string[]) => execFileSync('git', args, { env: { PATH: process.env.PATH, GIT_DIR: repos.pathOf(id), GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' }).trim();

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-git-'));
  repos = new GitStorage(root);
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

async function freshRepo() {
  const id = nextId();
  await repos.create(id);
  return id;
}

describe('git repository storage', () => {
  test('create makes a bare repository with main unborn and fsync on; doing it again changes nothing', async () => {
    const id = await freshRepo();
    assert.equal(git(id, 'rev-parse', '--is-bare-repository'), 'true');
    assert.equal(git(id, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
    assert.equal(git(id, 'config', 'core.fsync'), 'committed');
    assert.equal(git(id, 'config', 'core.logAllRefUpdates'), 'always');
    assert.equal(git(id, 'config', 'receive.denyNonFastForwards'), 'true');
    assert.equal(await repos.head(id), null);
    await repos.create(id);
    assert.equal(await repos.head(id), null);
    assert.deepEqual(
      fs.readdirSync(root).filter((e) => e.startsWith('.tmp')),
      [],
      'no temp directory left behind',
    );
  });

  test('parentOf names a commit’s first parent, null for a root commit, whatever its message says', async () => {
    const id = await freshRepo();
    const tree = await repos.writeTree(id, [{ path: 'a', content: Buffer.from('a') }]);
    const root = await repos.commit(id, { tree, parent: null, message: 'root\n\nparent 0000000000000000000000000000000000000000\n', timeSeconds: 1 });
    const child = await repos.commit(id, { tree, parent: root, message: 'child\n', timeSeconds: 2 });
    assert.equal(await repos.parentOf(id, root), null);
    assert.equal(await repos.parentOf(id, child), root);
    assert.equal(await repos.head(id), null, 'making commits does not move main');
  });

  test('ids that are not repository ids never become paths', () => {
    for (const bad of ['../etc', 'inst_../../x', '', 'INST_01', `inst_${'a'.repeat(25)}/`]) assert.throws(() => repos.pathOf(bad));
  });

  test('a written tree reads back with the same paths and bytes, nested directories included', async () => {
    const id = await freshRepo();
    const files = [
      { path: 'a.txt', content: Buffer.from('A\n') },
      { path: 'dir/sub/deep.yaml', content: Buffer.from('k: v\n') },
      { path: 'dir/x y.txt', content: Buffer.from('spaces') },
      { path: 'dir/ünï.txt', content: Buffer.from([0, 1, 2, 255]) },
      { path: 'empty', content: Buffer.alloc(0) },
    ];
    const tree = await repos.writeTree(id, files);
    assert.match(tree, /^[0-9a-f]{40}$/);
    const back = await repos.readTree(id, tree);
    const byPath = (xs: { path: string; content: Buffer }[]) => [...xs].sort((x, y) => (x.path < y.path ? -1 : 1)).map((x) => [x.path, x.content.toString('hex')]);
    assert.deepEqual(byPath(back), byPath(files));
    assert.equal(await repos.writeTree(id, [...files].reverse()), tree, 'a tree depends on its content only');
  });

  test('commits are reproducible: the same tree, parent, message and clock give the same commit', async () => {
    const a = await freshRepo();
    const b = await freshRepo();
    const files = [{ path: 'f', content: Buffer.from('x') }];
    const ta = await repos.writeTree(a, files);
    const tb = await repos.writeTree(b, files);
    const ca = await repos.commit(a, { tree: ta, parent: null, message: 'm\n', timeSeconds: 1767225600 });
    const cb = await repos.commit(b, { tree: tb, parent: null, message: 'm\n', timeSeconds: 1767225600 });
    assert.equal(ca, cb);
    assert.equal(git(a, 'log', '-1', '--format=%an <%ae> %at %ct', ca), 'Workspace Platform <renders@workspace-platform.invalid> 1767225600 1767225600');
  });

  test('advanceMain is compare-and-swap on the head: a writer that read an old head loses and nothing is overwritten', async () => {
    const id = await freshRepo();
    const tree = await repos.writeTree(id, [{ path: 'f', content: Buffer.from('1') }]);
    const c1 = await repos.commit(id, { tree, parent: null, message: 'one\n', timeSeconds: 1 });
    const c2 = await repos.commit(id, { tree, parent: null, message: 'two\n', timeSeconds: 2 });
    assert.equal(await repos.advanceMain(id, c1, null), true);
    assert.equal(await repos.advanceMain(id, c2, null), false, 'main is no longer unborn');
    assert.equal(await repos.head(id), c1);
    const c3 = await repos.commit(id, { tree, parent: c1, message: 'three\n', timeSeconds: 3 });
    const c4 = await repos.commit(id, { tree, parent: c1, message: 'four\n', timeSeconds: 4 });
    assert.equal(await repos.advanceMain(id, c3, c1), true);
    assert.equal(await repos.advanceMain(id, c4, c1), false, 'both read c1; only the first wins');
    assert.equal(await repos.head(id), c3);
    assert.equal(await repos.isAncestor(id, c1, c3), true);
    assert.equal(await repos.isAncestor(id, c4, c3), false);
  });

  test('twelve concurrent writers on one branch: every commit lands, in one chain, and fsck passes', async () => {
    const id = await freshRepo();
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const tree = await repos.writeTree(id, [{ path: `w${i}.txt`, content: Buffer.from(String(i)) }]);
        return appendCommit(repos, id, { tree, message: `writer ${i}\n`, timeSeconds: 100 + i });
      }),
    );
    const chain = git(id, 'rev-list', 'refs/heads/main').split('\n');
    assert.equal(chain.length, 12);
    assert.deepEqual(new Set(chain), new Set(results.map((r) => r.commit)));
    for (const r of results) {
      if (r.parent) assert.equal(git(id, 'rev-parse', `${r.commit}^`), r.parent, 'each commit sits on the head it swapped');
    }
    git(id, 'fsck', '--strict', '--no-dangling');
    assert.equal(git(id, 'reflog', 'show', '--format=%H', 'refs/heads/main').split('\n').length, 12, 'the reflog records every move');
  });

  test("create sweeps the half-made copies a killed process left of that repository; a young one may be another maker's and stays", async () => {
    const id = nextId();
    const dead = path.join(root, `.tmp-${id}-deadbeef`);
    const young = path.join(root, `.tmp-${id}-cafebabe`);
    const other = path.join(root, `.tmp-${nextId()}-0badf00d`);
    for (const dir of [dead, young, other]) fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
    const longAgo = new Date(Date.now() - 10 * 60_000);
    fs.utimesSync(dead, longAgo, longAgo);
    fs.utimesSync(other, longAgo, longAgo);
    await repos.create(id);
    assert.equal(fs.existsSync(dead), false, 'the abandoned copy is removed');
    assert.equal(fs.existsSync(young), true, 'a copy younger than a minute is left to its maker');
    assert.equal(fs.existsSync(other), true, "another repository's copies are not this create's business");
    assert.equal(await repos.head(id), null);
    for (const dir of [young, other]) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('repositories live in WSP_REPO_DIR, or in repos under the data directory', () => {
    assert.equal(repoRoot(loadConfig({ WSP_DATA_DIR: '/srv/wsp' })), '/srv/wsp/repos');
    assert.equal(repoRoot(loadConfig({ WSP_DATA_DIR: '/srv/wsp', WSP_REPO_DIR: '/mnt/shared/repos' })), '/mnt/shared/repos');
  });

  test('objects written in-process are the ones git itself writes: same ids, and fsck --strict passes', async () => {
    const id = await freshRepo();
    const files = [
      { path: 'b', content: Buffer.from('b\n') },
      { path: 'a.d/x', content: Buffer.from('x') },
      { path: 'a/y', content: Buffer.from('y') },
      { path: 'a-b', content: Buffer.from('z') },
    ];
    const tree = await repos.writeTree(id, files);
    for (const f of files) assert.ok(git(id, 'ls-tree', '-r', tree).includes(gitCli(id, ['hash-object', '--stdin'], f.content)), `${f.path}: git names the blob alike`);
    // mktree sorts as git does (a directory as if its name ended in "/"): the same bytes, the same id.
    const listing = git(id, 'ls-tree', tree);
    assert.equal(gitCli(id, ['mktree'], Buffer.from(listing + '\n')), tree);
    const message = 'restore of rnd_1\n\nwith a body and ünïcode\n';
    const ours = await repos.commit(id, { tree, parent: null, message, timeSeconds: 1767225600 });
    const date = '@1767225600 +0000';
    const theirs = execFileSync('git', ['commit-tree', tree], {
      input: message,
      env: {
        PATH: process.env.PATH,
        GIT_DIR: repos.pathOf(id),
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'Workspace Platform',
        GIT_AUTHOR_EMAIL: 'renders@workspace-platform.invalid',
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: 'Workspace Platform',
        GIT_COMMITTER_EMAIL: 'renders@workspace-platform.invalid',
        GIT_COMMITTER_DATE: date,
      },
      encoding: 'utf8',
    }).trim();
    assert.equal(ours, theirs, 'commit-tree writes the same commit');
    assert.equal(await repos.advanceMain(id, ours, null), true);
    assert.equal(git(id, 'rev-parse', 'refs/heads/main'), ours);
    assert.match(git(id, 'reflog', 'show', '--format=%H %gs', 'refs/heads/main'), new RegExp(`^${ours} wsp: advance main$`));
    git(id, 'fsck', '--strict', '--no-dangling');
  });

  test('parseCommit reads a commit as git does: tree, every parent in order, the message byte for byte', async () => {
    const id = await freshRepo();
    const tree = await repos.writeTree(id, [{ path: 'f', content: Buffer.from('f\n') }]);
    const env = {
      PATH: process.env.PATH,
      GIT_DIR: repos.pathOf(id),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Ünïcode Author',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_COMMITTER_NAME: 'C',
      GIT_COMMITTER_EMAIL: 'c@example.com',
    };
    const commitTree = (args: string[], message: string) => execFileSync('git', ['commit-tree', tree, ...args], { input: message, env, encoding: 'utf8' }).trim();
    const a = commitTree([], 'root\n');
    const b = commitTree(['-p', a], 'second\n');
    // A merge, a message with blank lines, a line that looks like a header, and non-ASCII text.
    const message = 'merge ünïcode\n\ntree 0000000000000000000000000000000000000000\nparent x\n\n\nend\n';
    const merge = commitTree(['-p', b, '-p', a], message);
    const raw = execFileSync('git', ['cat-file', 'commit', merge], { env });
    const parsed = parseCommit(raw);
    assert.deepEqual(parsed, { tree, parents: [b, a], message });
    assert.deepEqual(parseCommit(execFileSync('git', ['cat-file', 'commit', a], { env })), { tree, parents: [], message: 'root\n' });
    // The same through the storage (its remembered copy): the parent as git names it.
    assert.equal(await repos.parentOf(id, merge), b);
  });

  test('after git gc packs objects and refs, every read still answers (through git) and main still moves', async () => {
    const id = await freshRepo();
    const files = [{ path: 'dir/f.txt', content: Buffer.from('packed') }];
    const tree = await repos.writeTree(id, files);
    const c1 = await repos.commit(id, { tree, parent: null, message: 'one\n', timeSeconds: 1 });
    assert.equal(await repos.advanceMain(id, c1, null), true);
    git(id, 'gc', '--quiet', '--prune=now');
    assert.equal(fs.existsSync(path.join(repos.pathOf(id), 'refs/heads/main')), false, 'gc packed the ref');
    assert.equal(fs.existsSync(path.join(repos.pathOf(id), 'objects', c1.slice(0, 2))), false, 'gc packed the objects');
    assert.equal(await repos.head(id), c1, 'read from packed-refs');
    assert.equal(await repos.treeOf(id, c1), tree);
    assert.equal(await repos.commitMessage(id, c1), 'one\n');
    assert.deepEqual(
      (await repos.readTree(id, tree)).map((f) => [f.path, f.content.toString()]),
      [['dir/f.txt', 'packed']],
    );
    const c2 = await repos.commit(id, { tree, parent: c1, message: 'two\n', timeSeconds: 2 });
    assert.equal(await repos.advanceMain(id, c2, null), false, 'the packed value is the one compared');
    assert.equal(await repos.advanceMain(id, c2, c1), true);
    assert.equal(await repos.isAncestor(id, c1, c2), true, 'through a packed parent');
    assert.equal(await repos.isAncestor(id, c2, c1), false);
    assert.equal(git(id, 'rev-parse', 'refs/heads/main'), c2);
    git(id, 'fsck', '--strict', '--no-dangling');
  });

  test('making commits, reading them and moving main start no git process', async () => {
    const id = await freshRepo();
    const before = gitProcessesStarted();
    const tree = await repos.writeTree(id, [
      { path: 'a/b.txt', content: Buffer.from('1') },
      { path: 'c.txt', content: Buffer.from('2') },
    ]);
    const c1 = await repos.commit(id, { tree, parent: await repos.head(id), message: 'one\n', timeSeconds: 1 });
    assert.equal(await repos.advanceMain(id, c1, null), true);
    const c2 = await repos.commit(id, { tree, parent: c1, message: 'two\n', timeSeconds: 2 });
    assert.equal(await repos.advanceMain(id, c2, c1), true);
    assert.equal(await repos.parentOf(id, c2), c1);
    assert.equal(await repos.treeOf(id, c2), tree);
    assert.equal((await repos.readTree(id, tree)).length, 2);
    assert.equal(await repos.isAncestor(id, c1, c2), true);
    assert.equal(gitProcessesStarted() - before, 0);
  });

  test('ancestry over a long history of loose commits is walked in-process, and stays right', async () => {
    const id = await freshRepo();
    const tree = await repos.writeTree(id, [{ path: 'f', content: Buffer.from('x') }]);
    const chain: string[] = [];
    for (let i = 0; i < 150; i++) chain.push(await repos.commit(id, { tree, parent: chain[i - 1] ?? null, message: `${i}\n`, timeSeconds: i }));
    const stray = await repos.commit(id, { tree, parent: chain[10]!, message: 'stray\n', timeSeconds: 1 });
    const before = gitProcessesStarted();
    assert.equal(await repos.isAncestor(id, chain[0]!, chain[149]!), true);
    assert.equal(await repos.isAncestor(id, chain[149]!, chain[0]!), false);
    assert.equal(await repos.isAncestor(id, stray, chain[149]!), false, 'a side branch is not in the history');
    assert.equal(await repos.isAncestor(id, chain[10]!, stray), true);
    assert.equal(gitProcessesStarted() - before, 0);
    git(id, 'update-ref', 'refs/heads/main', chain[149]!);
    assert.equal(git(id, 'merge-base', '--is-ancestor', chain[0]!, chain[149]!), '', 'git agrees');
  });

  test('head of a repository that does not exist is an error, not an unborn branch', async () => {
    await assert.rejects(repos.head(nextId()));
  });

  test('sizeBytes is what a walk of the repository counts, after writes here, writes by another process, gc and a write in a remembered directory', async () => {
    const id = await freshRepo();
    const dir = repos.pathOf(id);
    const walk = (d: string): number =>
      fs.readdirSync(d, { withFileTypes: true }).reduce((a, e) => a + (e.isDirectory() ? walk(path.join(d, e.name)) : e.isFile() ? fs.statSync(path.join(d, e.name)).size : 0), 0);
    // Every object directory's mtime set to one time an hour back: each counts as settled and is
    // remembered, and a directory written into since looks unchanged unless this process says so.
    const old = new Date(Date.now() - 3600_000);
    const objects = path.join(dir, 'objects');
    const age = () => {
      for (const name of fs.readdirSync(objects)) fs.utimesSync(path.join(objects, name), old, old);
    };
    let parent: string | null = null;
    for (let i = 0; i < 5; i++) {
      const tree = await repos.writeTree(id, [{ path: `d/f${i}.txt`, content: Buffer.from(`content ${i}\n`) }]);
      parent = await repos.commit(id, { tree, parent, message: `${i}\n`, timeSeconds: i });
      assert.equal(await repos.advanceMain(id, parent, i === 0 ? null : (await repos.head(id))!), true);
      age();
      assert.equal(await repos.sizeBytes(id), walk(dir), `after render ${i}`);
    }
    // Written here into a directory that is remembered, its mtime then set back to what it was.
    const remembered = new Set(fs.readdirSync(objects).filter((n) => /^[0-9a-f]{2}$/.test(n)));
    let content = Buffer.alloc(0);
    for (let i = 0; !remembered.has(objectId('blob', content).slice(0, 2)); i++) content = Buffer.from(`same tick ${i}\n`);
    await repos.writeTree(id, [{ path: 'late.txt', content }]);
    age();
    assert.equal(await repos.sizeBytes(id), walk(dir), "this process's own writes are never taken for a remembered directory");
    // Another process (git itself) writes an object.
    const blob = gitCli(id, ['hash-object', '-w', '--stdin'], Buffer.from('written by git\n'));
    assert.equal(await repos.sizeBytes(id), walk(dir), 'an object written by another process counts');
    age();
    assert.equal(await repos.sizeBytes(id), walk(dir));
    // A file removed from a remembered directory (what gc's prune does).
    fs.rmSync(path.join(dir, 'objects', blob.slice(0, 2), blob.slice(2)));
    assert.equal(await repos.sizeBytes(id), walk(dir), 'a removed object no longer counts');
    git(id, 'gc', '--quiet', '--prune=now');
    assert.equal(await repos.sizeBytes(id), walk(dir), 'after gc packed everything');
    age();
    assert.equal(await repos.sizeBytes(id), walk(dir));
  });
});
