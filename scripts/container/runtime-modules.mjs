#!/usr/bin/env node
// The container image's node_modules: after `npm ci --omit=dev`, only the packages the bundle
// leaves outside itself (scripts/bundle-externals.mjs) and those they depend on, found as Node
// finds them; every other package is inside dist/wsp.cjs already and is removed (about 25 MB of
// the image: docs/decisions.md, "The container image").
//
// usage: node scripts/container/runtime-modules.mjs [APP_DIR]    (default: the working directory)
import fs from 'node:fs';
import path from 'node:path';
import { BUNDLE_EXTERNALS } from '../bundle-externals.mjs';

const app = path.resolve(process.argv[2] ?? '.');
const top = path.join(app, 'node_modules');

/** The package's name in a module specifier: `@scope/name/sub/path` and `name/sub` give the package. */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Where `name` resolves from the package directory `from`: its node_modules, then each parent's. */
function resolve(name, from) {
  for (let dir = from; dir.startsWith(app); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === app) break;
  }
  return undefined;
}

const kept = new Set();
const missing = [];
const queue = BUNDLE_EXTERNALS.map((specifier) => ({ name: packageOf(specifier), from: app, optional: true }));
while (queue.length > 0) {
  const { name, from, optional } = queue.shift();
  const dir = resolve(name, from);
  if (!dir) {
    // An optional dependency for another platform, or an external the build never installs in
    // production (tsx, pg-native): nothing to keep. A required one missing is an error.
    if (!optional) missing.push(`${name} (from ${path.relative(app, from) || '.'})`);
    continue;
  }
  const real = fs.realpathSync(dir);
  if (kept.has(real)) continue;
  kept.add(real);
  const manifest = JSON.parse(fs.readFileSync(path.join(real, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) queue.push({ name: dep, from: real, optional: false });
  for (const dep of Object.keys(manifest.optionalDependencies ?? {})) queue.push({ name: dep, from: real, optional: true });
}
if (missing.length > 0) {
  console.error(`runtime-modules: dependencies not installed: ${missing.join(', ')}`);
  process.exit(1);
}

/** Removes every package under `modules` that is not kept; walks into the kept ones' own node_modules. */
let removed = 0;
function prune(modules) {
  if (!fs.existsSync(modules)) return;
  for (const entry of fs.readdirSync(modules)) {
    const full = path.join(modules, entry);
    if (entry.startsWith('@')) {
      prune(full);
      if (fs.readdirSync(full).length === 0) fs.rmdirSync(full);
      continue;
    }
    // .bin (links to the removed packages' commands) and npm's hidden lock file: not run here.
    if (entry.startsWith('.') || !kept.has(fs.realpathSync(full))) {
      fs.rmSync(full, { recursive: true, force: true });
      removed++;
      continue;
    }
    prune(path.join(full, 'node_modules'));
  }
}
prune(top);
const names = [...kept].map((dir) => path.relative(top, dir)).sort();
console.log(`runtime-modules: kept ${names.length} packages (${names.join(', ')}), removed ${removed}`);
