import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';

/**
 * docs/architecture.md's list of areas is the one a newcomer reads first; it once left out six
 * areas and named one that did not exist. It must name exactly the areas src/areas.ts mounts
 * (each by its folder), plus `admin`, the operator commands' area, which has no routes.
 */
const ROOT = path.dirname(fs.realpathSync(path.join(REPO_ROOT, 'package.json')));
const WITHOUT_ROUTES = ['admin'];

function mountedAreas(): string[] {
  const source = fs.readFileSync(path.join(ROOT, 'src/areas.ts'), 'utf8');
  const imports = new Map<string, string>();
  for (const m of source.matchAll(/import \{ (mount\w+) \} from '\.\/([a-z-]+)\/mount\.js';/g)) imports.set(m[1]!, m[2]!);
  const listed = [...source.matchAll(/export const \w+_AREAS[^\n]*?\] = \[([^\]]*)\]/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean),
  );
  assert.ok(listed.length > 0, 'src/areas.ts lists its areas in V1_AREAS and ROOT_AREAS');
  return listed.map((name) => {
    const folder = imports.get(name);
    assert.ok(folder, `${name} in src/areas.ts is imported from src/<area>/mount.ts`);
    return folder;
  });
}

function documentedAreas(): string[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = /\n## Areas\n([\s\S]*?)\n\n/.exec(doc);
  assert.ok(section, 'docs/architecture.md has a section "## Areas" that starts with the list');
  return [...section[1]!.matchAll(/^- `([a-z-]+)`/gm)].map((m) => m[1]!);
}

test('docs/architecture.md lists exactly the areas src/areas.ts mounts, and admin', () => {
  const mounted = mountedAreas();
  for (const area of [...mounted, ...WITHOUT_ROUTES]) assert.ok(fs.existsSync(path.join(ROOT, 'src', area)), `src/${area} exists`);
  assert.deepEqual([...documentedAreas()].sort(), [...new Set([...mounted, ...WITHOUT_ROUTES])].sort());
});
