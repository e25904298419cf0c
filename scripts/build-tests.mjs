#!/usr/bin/env node
// Bundles every test file (test/**/*.test.ts) with what it imports into a folder of
// .test-build/, for scripts/test.mjs; each run has its own folder, so runs side by side never
// read each other's half-written files.
//
// Why: each of the ~190 file runs of `npm test` is a process that loads the app. Through tsx a
// file cost about 1.9 s of CPU before its first test (tsx's loader hooks resolve and look up
// every one of ~1,500 modules, node_modules included); compiled file by file, 1.9 s; bundled
// (shared code split into common chunks), 1.2 s: about 2 minutes of a 2-core machine per run.
// tsx itself compiles with esbuild, as this does, so the code that runs is the same. Source maps
// (paths and lines, without the sources' text, which made them slow to load) keep stack traces
// pointing at the .ts files.
//
// Everything at the top of the repository (src, test, scripts, node_modules, bin, dist, docs,
// sdk, package.json, ...) is linked into the folder, so a test that finds the repository's root
// (scripts/repo-root.ts) finds the real files from there.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BUILDS = path.join(root, '.test-build');
/** The bundles' own folder inside a build (beside the links): entries keep test/'s layout. */
export const BUNDLES = 't';

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** Bundles the test files of `testDir` into `.test-build/<name>/` and returns that folder. */
export async function buildTests(name, testDir = path.join(root, 'test')) {
  const dir = path.join(BUILDS, name);
  fs.mkdirSync(BUILDS, { recursive: true });
  // Folders of runs that were killed before removing their own.
  for (const old of fs.readdirSync(BUILDS)) {
    const p = path.join(BUILDS, old);
    if (Date.now() - fs.statSync(p).mtimeMs > 6 * 3600_000) fs.rmSync(p, { recursive: true, force: true });
  }
  fs.mkdirSync(dir);
  for (const entry of fs.readdirSync(root)) {
    if (entry === '.git' || entry === path.basename(BUILDS)) continue;
    fs.symlinkSync(path.join(root, entry), path.join(dir, entry));
  }
  await build({
    // The render threads' module, found through WSP_RENDER_THREAD_MODULE (src/installs/renders/render-pool.ts).
    entryPoints: [...testFiles(testDir), { in: path.join(root, 'src/installs/renders/render-thread.ts'), out: 'render-thread' }],
    define: { WSP_RENDER_THREAD_MODULE: JSON.stringify(pathToFileURL(path.join(dir, BUNDLES, 'render-thread.js')).href) },
    outdir: path.join(dir, BUNDLES),
    outbase: testDir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Native, or reading files beside their own (__filename); the SDK package (tests use its build, as
    // a user would).
    external: ['better-sqlite3', '@node-rs/argon2', 'oidc-provider', 'pg-native', '@fastify/swagger-ui', 'playwright-core', 'typescript', 'openapi-typescript', '@workspace-platform/sdk', 'esbuild'],
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);" },
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'warning',
  });
  return dir;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await buildTests(process.argv[2] ?? 'manual'));
