import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';

/**
 * A maintainer finds every decision inside this repository (docs/spec-gaps.md); comments once
 * cited the sections of a contract document kept outside it, 82 times. None may again.
 */
const ROOT = path.dirname(fs.realpathSync(path.join(REPO_ROOT, 'package.json')));
const FOLDERS = ['src', 'test', 'console/src', 'scripts', 'bench', 'packages/sdk/src'];
const OUTSIDE = new RegExp(['CONTRACT', '(\\.md)?', ' ?§'].join(''));

function* sources(dir: string): Generator<string> {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* sources(full);
    } else if (/\.(ts|tsx|mjs|js|cjs)$/.test(entry.name)) yield full;
  }
}

test('no source cites a section of a document outside the repository', () => {
  const found: string[] = [];
  for (const folder of FOLDERS) {
    for (const file of sources(path.join(ROOT, folder))) {
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (OUTSIDE.test(line)) found.push(`${path.relative(ROOT, file)}:${i + 1}`);
        });
    }
  }
  assert.deepEqual(found, [], 'cite docs/spec-gaps.md (its heading) instead');
});
