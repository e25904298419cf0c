import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { RenderPool, WorkspaceRendersBusy, type RenderPoolOptions } from '../../src/installs/renders/render-pool.js';
import { MAX_RENDER_STEPS, TemplateRenderError } from '../../src/installs/packages/templates.js';
import { renderHash } from '../../src/installs/renders/render-hash.js';
import { GitStorage } from '../../src/git/git-storage.js';
import { appendCommit } from '../../src/git/append-commit.js';

const BUDGET = { maxSteps: MAX_RENDER_STEPS, maxOutputBytes: 8 * 1024 * 1024 };
const UNBOUNDED = { maxSteps: Number.MAX_SAFE_INTEGER, maxOutputBytes: Number.MAX_SAFE_INTEGER };
/** The template bomb of issue 15: 60^4 passes over `{{x}}`. */
const BOMB = JSON.stringify({ 'x.txt': '{{#a}}{{#a}}{{#a}}{{#a}}{{x}}{{/a}}{{/a}}{{/a}}{{/a}}' });
const BOMB_VALUES = JSON.stringify({ a: Array.from({ length: 60 }, (_, i) => i), x: 'y' });
/** The same loops producing nothing: only time runs out. */
const SLOW_VALUES = JSON.stringify({ a: Array.from({ length: 60 }, (_, i) => i), x: '' });
/** Five loops deep (60^5 passes): no machine ends it before a time limit of seconds does. */
const ENDLESS = JSON.stringify({ 'x.txt': '{{#a}}{{#a}}{{#a}}{{#a}}{{#a}}{{x}}{{/a}}{{/a}}{{/a}}{{/a}}{{/a}}' });

const pools: RenderPool[] = [];
function pool(opts: Partial<RenderPoolOptions> = {}): RenderPool {
  // A time limit far past what these renders take, however loaded the machine (a thread's second
  // of CPU took over ten beside other work): the tests of the limit set their own.
  const p = new RenderPool({ threads: 2, perWorkspace: 2, timeoutMs: 120_000, memoryMb: 64, ...opts });
  pools.push(p);
  return p;
}
after(() => Promise.all(pools.map((p) => p.close())));

const text = (files: { path: string; content: Buffer }[]) => files.map((f) => [f.path, f.content.toString('utf8')]);

describe('render threads', () => {
  test('a render returns its files; a failure of its own is a TemplateRenderError and the thread serves the next', async () => {
    const p = pool({ threads: 1 });
    assert.deepEqual(text(await p.render('ws1', JSON.stringify({ 'a/b.txt': 'hi {{who}} é' }), JSON.stringify({ who: 'you' }), BUDGET)), [['a/b.txt', 'hi you é']]);
    await assert.rejects(
      p.render('ws1', JSON.stringify({ 'c.yaml': '{{replicas}}' }), '{}', BUDGET),
      (e: Error) => e instanceof TemplateRenderError && e.message === 'c.yaml: no value for {{replicas}}',
    );
    assert.deepEqual(text(await p.render('ws1', JSON.stringify({ x: '{{#xs}}{{.}}{{/xs}}' }), JSON.stringify({ xs: [1, 2, 3] }), BUDGET)), [['x', '123']]);
  });

  test('the template bomb fails on its step limit while the event loop stays free', async () => {
    const p = pool();
    const outcomes = await Promise.allSettled([p.render('bomb', BOMB, BOMB_VALUES, BUDGET), p.render('bomb', BOMB, BOMB_VALUES, BUDGET)]);
    for (const o of outcomes)
      assert.ok(
        o.status === 'rejected' && o.reason instanceof TemplateRenderError && o.reason.message === `x.txt: the render takes more than ${MAX_RENDER_STEPS} steps (sections over long lists)`,
        String(o.status === 'rejected' ? o.reason : 'rendered'),
      );

    // Off the loop: a render of four million steps (about a second of a thread; it would hold the
    // loop that long here) leaves it answering. The loop's longest delay is held to half the
    // render's time, and to 250 ms over four times its longest delay with nothing rendering,
    // measured just before: a machine busy with other work delays the loop too, and that is not
    // the render's doing.
    const longest = async (during: Promise<unknown>) => {
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      await during;
      delay.disable();
      return delay.max / 1e6;
    };
    const quiet = await longest(new Promise((r) => setTimeout(r, 500)));
    const started = Date.now();
    const held = await longest(assert.rejects(pool({ threads: 1 }).render('long', BOMB, SLOW_VALUES, { ...BUDGET, maxSteps: 4_000_000 }), /more than 4000000 steps/));
    const took = Date.now() - started;
    assert.ok(held < Math.min(250 + 4 * quiet, took / 2), `the event loop was held for ${held} ms of a ${took} ms render (${quiet} ms at most with nothing rendering)`);
  });

  test('a render that runs past its time is stopped and fails; the pool goes on with a new thread', async () => {
    // 1.5 s: the bomb takes several (more on a loaded machine), and the new thread's render that
    // follows, starting a thread included, well under that however loaded the machine (0.3 s was not).
    const p = pool({ threads: 1, timeoutMs: 1500 });
    const started = Date.now();
    await assert.rejects(p.render('slow', ENDLESS, SLOW_VALUES, UNBOUNDED), (e: Error) => e instanceof TemplateRenderError && e.message === 'the render ran longer than 1.5 seconds and was stopped');
    assert.ok(Date.now() - started < 1500 + 2700);
    assert.deepEqual(text(await p.render('slow', JSON.stringify({ f: '{{x}}' }), JSON.stringify({ x: 1 }), BUDGET)), [['f', '1']]);
  });

  test('a render that needs more memory than its thread has fails and the pool goes on', async () => {
    const p = pool({ threads: 1, memoryMb: 32 });
    // Nine million pieces of output kept while rendering: the heap, not the output, runs out.
    const values = JSON.stringify({ x: 'ab', xs: Array.from({ length: 3000 }, (_, i) => i) });
    await assert.rejects(
      p.render('hungry', JSON.stringify({ f: '{{#xs}}{{#xs}}{{x}}{{/xs}}{{/xs}}' }), values, UNBOUNDED),
      (e: Error) => e instanceof TemplateRenderError && e.message === 'the render needed more than 32 MB of memory and was stopped',
    );
    assert.deepEqual(text(await p.render('hungry', JSON.stringify({ f: 'ok' }), '{}', BUDGET)), [['f', 'ok']]);
  });

  test('a workspace gets at most its share of renders at once; another workspace is not held back', async () => {
    const p = pool({ threads: 2, perWorkspace: 1, timeoutMs: 4000 });
    // Both threads started and loaded first: what follows measures the pool's turns, not how long
    // a loaded machine takes to start a thread.
    await Promise.all([p.render('warm-1', JSON.stringify({ f: 'w' }), '{}', BUDGET), p.render('warm-2', JSON.stringify({ f: 'w' }), '{}', BUDGET)]);
    const settled: string[] = [];
    const first = p.render('greedy', ENDLESS, SLOW_VALUES, UNBOUNDED);
    void first.catch(() => undefined).finally(() => settled.push('greedy, the long one'));
    const started = Date.now();
    const second = p.render('greedy', JSON.stringify({ f: 'x' }), '{}', BUDGET);
    void second.catch(() => undefined).finally(() => settled.push('greedy, the second'));
    assert.deepEqual(text(await p.render('other', JSON.stringify({ f: 'x' }), '{}', BUDGET)), [['f', 'x']]);
    // Not held back: answered while greedy's long render holds its place (until its 4 s limit)
    // and before greedy's second gives up waiting for that place (2 s). An order, not a bound in
    // milliseconds, which a loaded machine stretched.
    assert.deepEqual(settled, [], 'the other workspace went first');
    await assert.rejects(second, WorkspaceRendersBusy);
    assert.ok(Date.now() - started >= 1900, 'it waited for its turn first');
    await assert.rejects(first, /ran longer than 4 seconds/);
    assert.deepEqual(text(await p.render('greedy', JSON.stringify({ f: 'y' }), '{}', BUDGET)), [['f', 'y']], 'its turn again once the first ended');
  });

  test('short renders of one workspace wait for its place and follow one another', async () => {
    const p = pool({ threads: 2, perWorkspace: 1 });
    const all = await Promise.all(Array.from({ length: 5 }, (_, i) => p.render('busy', JSON.stringify({ f: '{{i}}' }), JSON.stringify({ i }), BUDGET)));
    assert.deepEqual(
      all.map(text),
      Array.from({ length: 5 }, (_, i) => [['f', String(i)]]),
    );
  });

  test("render threads stand below the event loop for the cores (a nice value of their own, Linux's per-thread scheduling); 0 leaves them at the process's", async () => {
    /** Each thread of this process and its nice value (field 19 of its stat, after the name in parentheses). */
    const niceByThread = () =>
      new Map(
        fs.readdirSync('/proc/self/task').flatMap((tid) => {
          try {
            return [[tid, Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ').at(-1)!.split(' ')[16])] as const];
          } catch {
            return []; // a thread that ended meanwhile
          }
        }),
      );
    const own = os.getPriority();
    assert.ok(own < 10, `this test needs a process less nice than 10 (it is at ${own})`);
    const render = (p: RenderPool) => Promise.all([1, 2].map((i) => p.render(`nice${i}`, JSON.stringify({ a: '{{x}}' }), JSON.stringify({ x: i }), BUDGET)));
    const lowered = () => [...niceByThread()].filter(([, n]) => n === 10).map(([tid]) => tid);
    const before = new Set(lowered());
    await render(pool({ threads: 2, nice: 0 }));
    assert.deepEqual(
      lowered().filter((t) => !before.has(t)),
      [],
      'nice 0: no thread lowered',
    );
    await render(pool({ threads: 2, nice: 10 }));
    const fresh = lowered().filter((t) => !before.has(t));
    assert.equal(fresh.length, 2, `the pool's two threads at nice 10: ${JSON.stringify([...niceByThread()])}`);
    assert.equal(niceByThread().get(String(process.pid)), own, "the event loop's thread keeps its own");
  });

  test('renders beyond the threads wait for one and all complete', async () => {
    const p = pool({ threads: 1, perWorkspace: 8 });
    const all = await Promise.all(Array.from({ length: 6 }, (_, i) => p.render(`w${i % 3}`, JSON.stringify({ f: '{{i}}' }), JSON.stringify({ i }), BUDGET)));
    assert.deepEqual(
      all.map(text),
      Array.from({ length: 6 }, (_, i) => [['f', String(i)]]),
    );
  });
});

describe('render threads writing into a repository', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-pool-git-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  const repos = new GitStorage(root);
  let n = 0;
  const git = (id: string, ...args: string[]) => execFileSync('git', args, { env: { PATH: process.env.PATH, GIT_DIR: repos.pathOf(id), GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' }).trim();
  const FILES = JSON.stringify({ 'files/a.yaml': 'a: {{x}}\n', 'files/deep/b.yaml': 'b: {{x}}\n', 'README.md': 'same\n', 'files/c.md': 'same\n' });

  test('the thread writes the blobs and trees and answers the tree, its objects and render_hash: the same tree the event loop writes, a repository git finds valid', async () => {
    const p = pool({ threads: 1 });
    const id = `inst_${String(++n).padStart(26, '0')}`;
    await repos.create(id);
    const written = await repos.writeTreeWith(id, (gitDir) => p.renderInto('ws1', FILES, JSON.stringify({ x: 1 }), BUDGET, gitDir));
    const files = await p.render('ws1', FILES, JSON.stringify({ x: 1 }), BUDGET);
    assert.equal(written.renderHash, renderHash(files));
    // Measured by the thread after its writes: what a walk of the repository counts.
    assert.equal(written.repositoryBytes, await new GitStorage(root).sizeBytes(id));
    // Three trees (root, files/, files/deep/) and three blobs (the two `same` files are one).
    assert.equal(new Set(written.objects).size, 6);
    assert.equal(written.objects.length, 6);
    assert.deepEqual(
      (await repos.readTree(id, written.tree)).map((f) => [f.path, f.content.toString()]),
      files.map((f) => [f.path, f.content.toString()]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    const other = `inst_${String(++n).padStart(26, '0')}`;
    await repos.create(other);
    assert.equal(await repos.writeTree(other, files), written.tree);
    await appendCommit(repos, id, { tree: written.tree, message: 'render\n', timeSeconds: 1_700_000_000 });
    assert.equal(git(id, 'rev-parse', 'main^{tree}'), written.tree);
    git(id, 'fsck', '--strict', '--no-dangling');
    assert.deepEqual(
      fs.readdirSync(path.join(repos.pathOf(id), 'objects'), { recursive: true }).filter((f) => String(f).includes('tmp_obj_')),
      [],
    );
  });

  test("one thread's renders written at once: each answer is its own render's tree", async () => {
    const p = pool({ threads: 1, perWorkspace: 8 });
    const id = `inst_${String(++n).padStart(26, '0')}`;
    await repos.create(id);
    const values = Array.from({ length: 6 }, (_, i) => JSON.stringify({ x: `v${i}` }));
    const written = await Promise.all(values.map((v, i) => repos.writeTreeWith(id, (gitDir) => p.renderInto(`w${i % 2}`, FILES, v, BUDGET, gitDir))));
    for (const [i, v] of values.entries()) {
      const files = await p.render('ws1', FILES, v, BUDGET);
      assert.equal(written[i]!.tree, await repos.writeTree(id, files), `render ${i}`);
      assert.equal(written[i]!.renderHash, renderHash(files), `render ${i}`);
    }
    assert.equal(new Set(written.map((w) => w.tree)).size, 6);
  });

  test('an object already there is freshened, not written again', async () => {
    const p = pool({ threads: 1 });
    const id = `inst_${String(++n).padStart(26, '0')}`;
    await repos.create(id);
    const first = await repos.writeTreeWith(id, (gitDir) => p.renderInto('ws1', FILES, JSON.stringify({ x: 2 }), BUDGET, gitDir));
    const paths = first.objects.map((sha) => path.join(repos.pathOf(id), 'objects', sha.slice(0, 2), sha.slice(2)));
    const old = new Date(Date.now() - 30 * 86_400_000);
    const inodes = paths.map((f) => (fs.utimesSync(f, old, old), fs.statSync(f).ino));
    const again = await repos.writeTreeWith(id, (gitDir) => p.renderInto('ws1', FILES, JSON.stringify({ x: 2 }), BUDGET, gitDir));
    assert.equal(again.tree, first.tree);
    for (const [i, f] of paths.entries()) {
      assert.equal(fs.statSync(f).ino, inodes[i], `${f} kept`);
      assert.ok(fs.statSync(f).mtimeMs > old.getTime() + 86_400_000, `${f} freshened`);
    }
  });

  test('a write that fails rejects with its errno, leaves no temporary file, and the thread serves the next render', async () => {
    const p = pool({ threads: 1 });
    const id = `inst_${String(++n).padStart(26, '0')}`;
    await repos.create(id);
    const objects = path.join(repos.pathOf(id), 'objects');
    // A fan-out directory that is a file: the object's temporary file cannot be made in it.
    const files = await p.render('ws1', FILES, JSON.stringify({ x: 3 }), BUDGET);
    const blob = (await repos.writeTreeWith(id, (gitDir) => p.renderInto('ws1', FILES, JSON.stringify({ x: 3 }), BUDGET, gitDir))).objects;
    fs.rmSync(objects, { recursive: true });
    fs.mkdirSync(objects);
    fs.writeFileSync(path.join(objects, blob[0]!.slice(0, 2)), '');
    await assert.rejects(p.renderInto('ws1', FILES, JSON.stringify({ x: 3 }), BUDGET, repos.pathOf(id)), (e: NodeJS.ErrnoException) => e.code === 'ENOTDIR' || e.code === 'EEXIST');
    assert.deepEqual(
      fs.readdirSync(objects, { recursive: true }).filter((f) => String(f).includes('tmp_obj_')),
      [],
    );
    assert.equal(files.length, 4);
    assert.deepEqual(text(await p.render('ws1', JSON.stringify({ f: '{{x}}' }), JSON.stringify({ x: 4 }), BUDGET)), [['f', '4']]);
  });
});

test("the threads start however the server runs: from source under tsx, from tsc's dist/ (bundled: the rest of this file)", () => {
  const script = (module: string) => `
    const { RenderPool } = await import(${JSON.stringify(module)});
    const pool = new RenderPool({ threads: 1, perWorkspace: 1, timeoutMs: 60000, memoryMb: 64 });
    const [file] = await pool.render('w', JSON.stringify({ f: 'hi {{x}}' }), JSON.stringify({ x: 'there' }), { maxSteps: 100, maxOutputBytes: 100 });
    process.stdout.write(file.content.toString());
    await pool.close();`;
  for (const [flags, module] of [
    [['--import', 'tsx'], path.join(REPO_ROOT, 'src/installs/renders/render-pool.ts')],
    [[], path.join(REPO_ROOT, 'dist/installs/renders/render-pool.js')],
  ] as const) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-pool-')), 'render.mjs');
    fs.writeFileSync(file, script(module));
    const run = spawnSync(process.execPath, [...flags, file], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 90_000 });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    assert.equal(run.stdout, 'hi there', `${module}: ${run.stderr}`);
  }
});
