#!/usr/bin/env node
// `npm run build`, second step: the compiled `wsp` (dist/cli/main.js) and the packages it uses,
// bundled into one file, dist/wsp.mjs, which bin/wsp.js runs. Node 20 resolves and compiles an
// ES module file by file: the ~900 files `wsp serve` loads took about 400 ms of its start (see
// docs/decisions.md). Left outside: the native SQLite and argon2 bindings, and Swagger UI, which serves its
// page's assets from its own directory.
import { build } from 'esbuild';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// The render threads' module is a bundle of its own beside it (src/installs/renders/render-pool.ts).
await build({
  entryPoints: [
    { in: path.join(root, 'dist/cli/main.js'), out: 'wsp' },
    { in: path.join(root, 'dist/installs/renders/render-worker.js'), out: 'render-worker' },
  ],
  outdir: path.join(root, 'dist'),
  outExtension: { '.js': '.mjs' },
  define: { WSP_RENDER_WORKER: JSON.stringify('./render-worker.mjs') },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', '@node-rs/argon2', '@fastify/swagger-ui', 'pg-native'],
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);" },
  // For `node --enable-source-maps bin/wsp.js ...` when a stack trace should name the sources.
  sourcemap: 'linked',
  logLevel: 'warning',
});
