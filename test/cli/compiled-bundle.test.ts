import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { startServer } from '../helpers/processes.js';
import { createTestApp, ENGINE } from '../helpers/harness.js';
import { cacheFileOf } from '../../bin/compiled-bundle.js';

/**
 * `wsp` runs its CommonJS bundle with V8's code cache (bin/compiled-bundle.js): a server writes
 * the bytecode once warm, the next start takes it, and a cache that is not this bundle's (another
 * build, garbage, other flags) is never run. Each run is a process of its own, as a start is.
 */
// Inside the repository: a bundle there finds its packages in its node_modules, as an installed one does.
fs.mkdirSync(path.join(REPO_ROOT, '.wsp-test'), { recursive: true });
const work = fs.mkdtempSync(path.join(REPO_ROOT, '.wsp-test', 'compiled-bundle-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

const LOADER = path.join(REPO_ROOT, 'bin/compiled-bundle.js');

interface Run {
  cache: 'accepted' | 'rejected' | 'absent' | 'off';
  exports: unknown;
  saved: boolean;
  savedAgain: boolean;
}

// A file, not `node -e`: the cache's name depends on the process's flags, and -e's script is one.
const RUNNER = path.join(work, 'runner.mjs');
fs.writeFileSync(
  RUNNER,
  `import { runCompiledBundle } from ${JSON.stringify(LOADER)};
const r = runCompiledBundle(process.argv[2], process.argv[3]);
console.log(JSON.stringify({ cache: r.cache, exports: r.exports, saved: r.save(), savedAgain: r.save() }));`,
);

/** Runs `bundle` through the loader in a new process: what became of the cache, its exports, and two save()s. */
function run(bundle: string, cacheDir: string, flags: string[] = []): Run {
  return JSON.parse(execFileSync(process.execPath, [...flags, RUNNER, bundle, cacheDir], { encoding: 'utf8' })) as Run;
}

const bundleOf = (dir: string, body: string) => {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'wsp.cjs');
  fs.writeFileSync(file, body);
  return file;
};
const cachesIn = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

test('the first run writes the cache once; the next takes it; the bundle runs as a CommonJS module either way', () => {
  const dir = path.join(work, 'first');
  const bundle = bundleOf(dir, `module.exports = { file: __filename, sum: [1, 2, 3].reduce((a, b) => a + b), resolves: require.resolve('kysely').length > 0 };`);
  const cacheDir = path.join(dir, 'cache');
  const first = run(bundle, cacheDir);
  assert.deepEqual(first, { cache: 'absent', exports: { file: bundle, sum: 6, resolves: true }, saved: true, savedAgain: false });
  const written = cachesIn(cacheDir);
  assert.equal(written.length, 1);
  assert.match(written[0]!, /^wsp-[0-9a-f]{20}-[0-9a-f]{8}\.cache$/);
  const mtime = fs.statSync(path.join(cacheDir, written[0]!)).mtimeMs;
  const second = run(bundle, cacheDir);
  assert.deepEqual(second, { cache: 'accepted', exports: first.exports, saved: false, savedAgain: false });
  assert.equal(fs.statSync(path.join(cacheDir, written[0]!)).mtimeMs, mtime, 'an accepted cache is not written again');
});

test('a rebuilt bundle of the same length never runs the old bytecode: it has its own cache, and the old one goes', () => {
  const dir = path.join(work, 'rebuilt');
  const cacheDir = path.join(dir, 'cache');
  const bundle = bundleOf(dir, `module.exports = { build: 'one', n: 1 + 1 };`);
  assert.equal(run(bundle, cacheDir).saved, true);
  const old = cachesIn(cacheDir);
  // V8 checks a cache against the source's length only: this one would pass it.
  const rebuilt = `module.exports = { build: 'two', n: 2 + 2 };`;
  assert.equal(rebuilt.length, fs.readFileSync(bundle, 'utf8').length);
  fs.writeFileSync(bundle, rebuilt);
  const afterRebuild = run(bundle, cacheDir);
  assert.deepEqual(afterRebuild, { cache: 'absent', exports: { build: 'two', n: 4 }, saved: true, savedAgain: false });
  const now = cachesIn(cacheDir);
  assert.equal(now.length, 1);
  assert.notDeepEqual(now, old, "the other build's cache is removed when this one's is written");
  assert.equal(run(bundle, cacheDir).cache, 'accepted');
});

test('a cache V8 refuses (garbage, a torn file) is rejected, the bundle runs compiled from its source, and the cache is written anew', () => {
  const dir = path.join(work, 'garbage');
  const cacheDir = path.join(dir, 'cache');
  const bundle = bundleOf(dir, `module.exports = { ok: 'yes' };`);
  fs.mkdirSync(cacheDir, { recursive: true });
  fs.writeFileSync(cacheFileOf(fs.readFileSync(bundle), cacheDir, []).file, Buffer.alloc(64, 7));
  assert.deepEqual(run(bundle, cacheDir), { cache: 'rejected', exports: { ok: 'yes' }, saved: true, savedAgain: false });
  assert.equal(run(bundle, cacheDir).cache, 'accepted');
  assert.deepEqual(
    cachesIn(cacheDir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file is left behind',
  );
});

test('other flags keep a cache of their own; a directory that cannot be written leaves the start as it was', () => {
  const dir = path.join(work, 'flags');
  const cacheDir = path.join(dir, 'cache');
  const bundle = bundleOf(dir, `module.exports = 42;`);
  assert.equal(run(bundle, cacheDir).saved, true);
  const other = run(bundle, cacheDir, ['--max-old-space-size=512']);
  assert.deepEqual([other.cache, other.saved], ['absent', true]);
  assert.equal(run(bundle, cacheDir, ['--max-old-space-size=512']).cache, 'accepted');
  assert.equal(cachesIn(cacheDir).length, 2);
  assert.equal(run(bundle, cacheDir).cache, 'accepted', "the other flags' cache left this one alone");
  // A regular file where the directory should be: nothing can be made under it.
  const blocked = path.join(dir, 'not-a-directory');
  fs.writeFileSync(blocked, '');
  assert.deepEqual(run(bundle, path.join(blocked, 'cache')), { cache: 'absent', exports: 42, saved: false, savedAgain: false });
});

test("under --enable-source-maps the bundle runs through Node's own loader, which maps its stack traces; no cache is read or written", () => {
  const dir = path.join(work, 'source-maps');
  const cacheDir = path.join(dir, 'cache');
  const bundle = bundleOf(dir, `module.exports = { line: new Error('here').stack.split('\\n')[1].trim() };\n//# sourceMappingURL=wsp.cjs.map\n`);
  // A map that says line 1 of the bundle is line 7 of src/origin.ts.
  fs.writeFileSync(`${bundle}.map`, JSON.stringify({ version: 3, sources: ['src/origin.ts'], names: [], mappings: 'AAMA' }));
  const mapped = run(bundle, cacheDir, ['--enable-source-maps']);
  assert.equal(mapped.cache, 'off');
  assert.equal(mapped.saved, false);
  assert.match((mapped.exports as { line: string }).line, /src\/origin\.ts:7:/);
  assert.deepEqual(cachesIn(cacheDir), []);
  // Without the flag the bundle's own lines are shown, as vm runs it.
  assert.match((run(bundle, cacheDir).exports as { line: string }).line, /wsp\.cjs:1:/);
});

test('wsp serve: the first start writes the cache once warm, the next says it took it; the bundle is strict, as the ES modules it is made of', async () => {
  // A copy of the installation beside the repository's node_modules, with a cache of its own.
  const install = path.join(work, 'install');
  fs.mkdirSync(path.join(install, 'bin'), { recursive: true });
  fs.mkdirSync(path.join(install, 'dist'), { recursive: true });
  for (const f of ['wsp.js', 'compiled-bundle.js']) fs.copyFileSync(path.join(REPO_ROOT, 'bin', f), path.join(install, 'bin', f));
  fs.copyFileSync(path.join(REPO_ROOT, 'dist/wsp.cjs'), path.join(install, 'dist/wsp.cjs'));
  assert.match(fs.readFileSync(path.join(install, 'dist/wsp.cjs'), 'utf8').slice(0, 20), /^"use strict";/);
  const h = await createTestApp();
  try {
    const starts: (string | undefined)[] = [];
    for (let i = 0; i < 2; i++) {
      const server = await startServer({ ...h.dbEnv, WSP_MASTER_KEY: h.config.masterKey! }, [], [path.join(install, 'bin/wsp.js'), 'serve']);
      try {
        const listening = server.output.map((l) => JSON.parse(l) as { msg?: string; compile_cache?: string; sqlite_checkpoints?: string }).find((e) => e.msg === 'listening');
        starts.push(listening?.compile_cache);
        // A server checkpoints SQLite's log on a thread of its own (src/db/wal-checkpointer.ts).
        assert.equal(listening?.sqlite_checkpoints, ENGINE === 'sqlite' ? 'thread' : undefined);
        assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
        if (i === 0) {
          for (let waited = 0; !server.output.some((l) => l.includes('"compile cache written"')); waited += 50) {
            assert.ok(waited < 30_000, `no cache written:\n${server.output.join('\n')}`);
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      } finally {
        await server.stop();
      }
    }
    assert.deepEqual(starts, ['absent', 'accepted']);
    assert.equal(cachesIn(path.join(install, 'dist/compile-cache')).length, 1);
  } finally {
    await h.close();
  }
});
