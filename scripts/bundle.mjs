#!/usr/bin/env node
// `npm run build`, second step: the compiled `wsp` (dist/cli/main.js) and the packages it uses,
// bundled into one file, dist/wsp.cjs, which bin/wsp.js runs. Node 20 resolves and compiles an
// ES module file by file: the ~900 files `wsp serve` loads took about 400 ms of its start (see
// docs/decisions.md). CommonJS rather than an ES module: Node 20 gives a code cache to a script
// only (bin/compiled-bundle.js). Left outside: the native SQLite and argon2 bindings, and Swagger
// UI, which serves its page's assets from its own directory.
import { build } from 'esbuild';
import path from 'node:path';
import { BUNDLE_EXTERNALS } from './bundle-externals.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const common = {
  outdir: path.join(root, 'dist'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: BUNDLE_EXTERNALS,
  // For `node --enable-source-maps bin/wsp.js ...` when a stack trace should name the sources.
  sourcemap: 'linked',
  logLevel: 'warning',
};
await build({
  ...common,
  entryPoints: [{ in: path.join(root, 'dist/cli/main.js'), out: 'wsp' }],
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  // The render threads' module is a bundle of its own beside it (src/installs/renders/render-pool.ts).
  // import.meta.url is the bundle's own URL, as it was; import.meta.resolve is only reached when
  // running from the TypeScript sources (a render thread loading tsx), never from the bundle.
  define: { WSP_RENDER_THREAD_MODULE: JSON.stringify('./render-thread.mjs'), 'import.meta.url': '__wspBundleUrl', 'import.meta.resolve': 'require.resolve' },
  // Strict, as the ES modules it is made of (and as the ES module bundle it replaced ran every
  // package it holds).
  banner: { js: `"use strict"; const __wspBundleUrl = require('node:url').pathToFileURL(__filename).href;` },
  // Every import() is of a module in the bundle or of a CommonJS package outside it: a require
  // (a script run by vm has no loader for import()).
  supported: { 'dynamic-import': false },
});
await build({
  ...common,
  entryPoints: [{ in: path.join(root, 'dist/installs/renders/render-thread.js'), out: 'render-thread' }],
  outExtension: { '.js': '.mjs' },
  format: 'esm',
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);" },
});
