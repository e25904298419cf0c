import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { RenderPool, WorkspaceRendersBusy, type RenderPoolOptions } from '../../src/installs/renders/render-pool.js';
import { MAX_RENDER_STEPS, TemplateRenderError } from '../../src/installs/packages/templates.js';

const BUDGET = { maxSteps: MAX_RENDER_STEPS, maxOutputBytes: 8 * 1024 * 1024 };
const UNBOUNDED = { maxSteps: Number.MAX_SAFE_INTEGER, maxOutputBytes: Number.MAX_SAFE_INTEGER };
/** The template bomb of issue 15: 60^4 passes over `{{x}}`. */
const BOMB = JSON.stringify({ 'x.txt': '{{#a}}{{#a}}{{#a}}{{#a}}{{x}}{{/a}}{{/a}}{{/a}}{{/a}}' });
const BOMB_VALUES = JSON.stringify({ a: Array.from({ length: 60 }, (_, i) => i), x: 'y' });
/** The same loops producing nothing: only time runs out. */
const SLOW_VALUES = JSON.stringify({ a: Array.from({ length: 60 }, (_, i) => i), x: '' });

const pools: RenderPool[] = [];
function pool(opts: Partial<RenderPoolOptions> = {}): RenderPool {
  const p = new RenderPool({ threads: 2, perWorkspace: 2, timeoutMs: 10_000, memoryMb: 64, ...opts });
  pools.push(p);
  return p;
}
after(() => Promise.all(pools.map((p) => p.close())));

const text = (files: { path: string; content: Buffer }[]) => files.map((f) => [f.path, f.content.toString('utf8')]);

describe('render threads', () => {
  test('a render returns its files; a failure of its own is a TemplateRenderError and the thread serves the next', async () => {
    const p = pool({ threads: 1 });
    assert.deepEqual(text(await p.render('ws1', JSON.stringify({ 'a/b.txt': 'hi {{who}} é' }), JSON.stringify({ who: 'you' }), BUDGET)), [['a/b.txt', 'hi you é']]);
    await assert.rejects(p.render('ws1', JSON.stringify({ 'c.yaml': '{{replicas}}' }), '{}', BUDGET), (e: Error) => e instanceof TemplateRenderError && e.message === 'c.yaml: no value for {{replicas}}');
    assert.deepEqual(text(await p.render('ws1', JSON.stringify({ 'x': '{{#xs}}{{.}}{{/xs}}' }), JSON.stringify({ xs: [1, 2, 3] }), BUDGET)), [['x', '123']]);
  });

  test('the template bomb fails on its step limit while the event loop stays free', async () => {
    const p = pool();
    const outcomes = await Promise.allSettled([p.render('bomb', BOMB, BOMB_VALUES, BUDGET), p.render('bomb', BOMB, BOMB_VALUES, BUDGET)]);
    for (const o of outcomes) assert.ok(o.status === 'rejected' && o.reason instanceof TemplateRenderError && o.reason.message === `x.txt: the render takes more than ${MAX_RENDER_STEPS} steps (sections over long lists)`, String(o.status === 'rejected' ? o.reason : 'rendered'));

    // Off the loop: a render of four million steps (about a second of a thread; it would hold the
    // loop that long here) leaves it answering. The bound leaves room for a loaded machine.
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = Date.now();
    await assert.rejects(pool({ threads: 1 }).render('long', BOMB, SLOW_VALUES, { ...BUDGET, maxSteps: 4_000_000 }), /more than 4000000 steps/);
    delay.disable();
    const took = Date.now() - started;
    assert.ok(delay.max / 1e6 < Math.min(250, took / 2), `the event loop was held for ${delay.max / 1e6} ms of a ${took} ms render`);
  });

  test('a render that runs past its time is stopped and fails; the pool goes on with a new thread', async () => {
    const p = pool({ threads: 1, timeoutMs: 300 });
    const started = Date.now();
    await assert.rejects(p.render('slow', BOMB, SLOW_VALUES, UNBOUNDED), (e: Error) => e instanceof TemplateRenderError && e.message === 'the render ran longer than 0.3 seconds and was stopped');
    assert.ok(Date.now() - started < 3000);
    assert.deepEqual(text(await p.render('slow', JSON.stringify({ f: '{{x}}' }), JSON.stringify({ x: 1 }), BUDGET)), [['f', '1']]);
  });

  test('a render that needs more memory than its thread has fails and the pool goes on', async () => {
    const p = pool({ threads: 1, memoryMb: 32 });
    // Nine million pieces of output kept while rendering: the heap, not the output, runs out.
    const values = JSON.stringify({ x: 'ab', xs: Array.from({ length: 3000 }, (_, i) => i) });
    await assert.rejects(p.render('hungry', JSON.stringify({ f: '{{#xs}}{{#xs}}{{x}}{{/xs}}{{/xs}}' }), values, UNBOUNDED), (e: Error) => e instanceof TemplateRenderError && e.message === 'the render needed more than 32 MB of memory and was stopped');
    assert.deepEqual(text(await p.render('hungry', JSON.stringify({ f: 'ok' }), '{}', BUDGET)), [['f', 'ok']]);
  });

  test('a workspace gets at most its share of renders at once; another workspace is not held back', async () => {
    const p = pool({ threads: 2, perWorkspace: 1, timeoutMs: 4000 });
    const first = p.render('greedy', BOMB, SLOW_VALUES, UNBOUNDED);
    const started = Date.now();
    const second = p.render('greedy', JSON.stringify({ f: 'x' }), '{}', BUDGET);
    assert.deepEqual(text(await p.render('other', JSON.stringify({ f: 'x' }), '{}', BUDGET)), [['f', 'x']]);
    assert.ok(Date.now() - started < 1500, 'the other workspace went first');
    await assert.rejects(second, WorkspaceRendersBusy);
    assert.ok(Date.now() - started >= 1900, 'it waited for its turn first');
    await assert.rejects(first, /ran longer than 4 seconds/);
    assert.deepEqual(text(await p.render('greedy', JSON.stringify({ f: 'y' }), '{}', BUDGET)), [['f', 'y']], 'its turn again once the first ended');
  });

  test("short renders of one workspace wait for its place and follow one another", async () => {
    const p = pool({ threads: 2, perWorkspace: 1 });
    const all = await Promise.all(Array.from({ length: 5 }, (_, i) => p.render('busy', JSON.stringify({ f: '{{i}}' }), JSON.stringify({ i }), BUDGET)));
    assert.deepEqual(all.map(text), Array.from({ length: 5 }, (_, i) => [['f', String(i)]]));
  });

  test('renders beyond the threads wait for one and all complete', async () => {
    const p = pool({ threads: 1, perWorkspace: 8 });
    const all = await Promise.all(Array.from({ length: 6 }, (_, i) => p.render(`w${i % 3}`, JSON.stringify({ f: '{{i}}' }), JSON.stringify({ i }), BUDGET)));
    assert.deepEqual(all.map(text), Array.from({ length: 6 }, (_, i) => [['f', String(i)]]));
  });
});

test('the threads start however the server runs: from source under tsx, from tsc\'s dist/ (bundled: the rest of this file)', () => {
  const script = (module: string) => `
    const { RenderPool } = await import(${JSON.stringify(module)});
    const pool = new RenderPool({ threads: 1, perWorkspace: 1, timeoutMs: 10000, memoryMb: 64 });
    const [file] = await pool.render('w', JSON.stringify({ f: 'hi {{x}}' }), JSON.stringify({ x: 'there' }), { maxSteps: 100, maxOutputBytes: 100 });
    process.stdout.write(file.content.toString());
    await pool.close();`;
  for (const [flags, module] of [
    [['--import', 'tsx'], path.join(REPO_ROOT, 'src/installs/renders/render-pool.ts')],
    [[], path.join(REPO_ROOT, 'dist/installs/renders/render-pool.js')],
  ] as const) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-pool-')), 'render.mjs');
    fs.writeFileSync(file, script(module));
    const run = spawnSync(process.execPath, [...flags, file], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    assert.equal(run.stdout, 'hi there', `${module}: ${run.stderr}`);
  }
});
