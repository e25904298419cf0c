import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';

/**
 * The lines between the parts of src/ (.dependency-cruiser.cjs, docs/architecture.md): the
 * checker `npm test` runs passes on the real tree and fails on a fixture that breaks each rule.
 */
/** The repository itself, not the test build's folder of links to it (the checker names files by their real paths). */
const ROOT = path.dirname(fs.realpathSync(path.join(REPO_ROOT, 'package.json')));
const CLI = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string; severity: string };
  from: string;
  to: string;
}

const run = (cwd: string, args: string[]) => spawnSync(process.execPath, [CLI, 'src', '--config', CONFIG, ...args], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

test('the real tree keeps every rule of .dependency-cruiser.cjs (as npm run lint:deps checks it)', () => {
  const res = run(ROOT, ['--output-type', 'err']);
  assert.equal(res.status, 0, res.stdout + res.stderr);
});

test('a tree that breaks each rule on purpose fails the checker, at each break', () => {
  const fixture = path.join(ROOT, 'test/architecture/fixture');
  const err = run(fixture, ['--output-type', 'err']);
  assert.notEqual(err.status, 0, 'the checker exits non-zero');
  const { summary } = JSON.parse(run(fixture, ['--output-type', 'json']).stdout) as { summary: { error: number; violations: Violation[] } };
  const found = summary.violations
    .filter((v) => v.rule.severity === 'error')
    .map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
    .sort();
  assert.deepEqual(found, [
    'machinery-imports-no-area: src/http/server.ts -> src/cli/main.ts',
    'machinery-imports-no-area: src/shared/format.ts -> src/installs/service.ts',
    'no-foreign-store: src/dashboards/service.ts -> src/installs/store.ts',
    'no-foreign-tables: src/dashboards/pins.ts -> src/installs/tables.ts',
    'nothing-imports-the-cli: src/http/server.ts -> src/cli/main.ts',
    'schemas-import-no-runtime: src/dashboards/schemas.ts -> src/dashboards/service.ts',
    'shared-imports-only-shared: src/shared/format.ts -> src/installs/service.ts',
    'worker-loads-no-web-server: src/worker.ts -> ../../../node_modules/fastify/fastify.js',
  ]);
  assert.equal(summary.error, found.length);
});
