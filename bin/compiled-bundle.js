// Runs the CommonJS bundle of `wsp` (dist/wsp.cjs, scripts/bundle.mjs) with V8's code cache: the
// bytecode of every function a server compiled by the time it was warm, kept in a file beside the
// bundle, so that the next start neither parses the bundle's 4 MB nor compiles its functions again
// (about a third of `wsp serve`'s start: docs/benchmarks.md, round eight). Node 20 offers a code
// cache to `vm.Script` only, not to ES modules (module.enableCompileCache is Node 22's), hence a
// CommonJS bundle run here rather than imported.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** Where the running bundle asks for its cache to be written (src/shared/compile-cache.ts). */
export const SAVE_HOOK = Symbol.for('wsp.compileCache');

/**
 * The cache's file for this bundle under these flags. V8 checks its own version and flags, and
 * the source's length only: a rebuilt bundle of the same length would take the old bytecode, so
 * the name carries a hash of the bundle's content (a few milliseconds), and of Node's version and
 * flags (a server started with other flags keeps its own cache instead of replacing another's).
 */
export function cacheFileOf(source, cacheDir, flags = process.execArgv) {
  const bundle = createHash('sha256').update(source).digest('hex').slice(0, 20);
  const runtime = createHash('sha256').update(`${process.version}\0${flags.join('\0')}`).digest('hex').slice(0, 8);
  return { file: path.join(cacheDir, `wsp-${bundle}-${runtime}.cache`), bundlePrefix: `wsp-${bundle}-` };
}

/**
 * Runs `bundlePath` as a CommonJS module with the cached bytecode in `cacheDir` when there is
 * some for it. Answers what became of the cache ('accepted', 'rejected' by V8, 'absent', or 'off'
 * under --enable-source-maps) and `save()`, which writes the bytecode compiled so far when none
 * was accepted: atomically (a file renamed into place, so two servers starting at once never
 * leave half of one), removing the caches of other bundles, and silently not at all where the
 * directory cannot be written (a read-only installation starts as it did without a cache).
 */
export function runCompiledBundle(bundlePath, cacheDir) {
  if (process.sourceMapsEnabled) {
    // `node --enable-source-maps bin/wsp.js`: stack traces that name the sources, through Node's
    // own loader, which reads the bundle's source map (Node 20 gives a script run by vm none).
    const save = () => false;
    globalThis[SAVE_HOOK] = { cache: 'off', save };
    return { cache: 'off', save, exports: createRequire(import.meta.url)(bundlePath) };
  }
  const bytes = fs.readFileSync(bundlePath);
  const { file, bundlePrefix } = cacheFileOf(bytes, cacheDir);
  const source = bytes.toString('utf8');
  let cachedData;
  try {
    cachedData = fs.readFileSync(file);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(source), { filename: bundlePath, ...(cachedData ? { cachedData } : {}) });
  const cache = cachedData === undefined ? 'absent' : script.cachedDataRejected ? 'rejected' : 'accepted';
  let saved = cache === 'accepted';
  const save = () => {
    if (saved) return false;
    saved = true;
    try {
      fs.mkdirSync(cacheDir, { recursive: true });
      const temp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, script.createCachedData());
      fs.renameSync(temp, file);
      for (const old of fs.readdirSync(cacheDir)) {
        if (old.startsWith('wsp-') && !old.startsWith(bundlePrefix)) fs.rmSync(path.join(cacheDir, old), { force: true });
      }
      return true;
    } catch {
      return false;
    }
  };
  globalThis[SAVE_HOOK] = { cache, save };
  const module = new Module(bundlePath);
  module.filename = bundlePath;
  module.paths = Module._nodeModulePaths(path.dirname(bundlePath));
  script.runInThisContext()(module.exports, createRequire(bundlePath), module, bundlePath, path.dirname(bundlePath));
  return { cache, save, exports: module.exports };
}
