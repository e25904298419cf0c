import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { describeViolation, tableViolations, type MachineryTablesOfAreas } from './table-names.js';

/**
 * Each area's tables are its own (docs/decisions.md, "One table file for every area"): declared
 * in its `src/<area>/tables.ts`, named in queries by its modules only; another area reads them
 * through the functions the owner exports. The check reads the queries themselves
 * (table-names.ts), which dependency-cruiser cannot see: every module shares one `DB`.
 */
/** The repository itself, not the test build's folder of links to it. */
const ROOT = path.dirname(fs.realpathSync(path.join(REPO_ROOT, 'package.json')));

/** The machinery's folders, as dependency-cruiser knows them (its rule `machinery-imports-no-area`): one list for both checks. */
const MACHINERY = (() => {
  const config = createRequire(import.meta.url)(path.join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: { name: string; from: { path: string } }[] };
  const rule = config.forbidden.find((r) => r.name === 'machinery-imports-no-area')!;
  return /^\^src\/\(([a-z|-]+)\)\/$/.exec(rule.from.path)![1]!.split('|');
})();

/** The machinery's tables that areas name nonetheless, and why; nothing else of the machinery's is any area's. */
const ALLOWED: MachineryTablesOfAreas = {
  events: {
    areas: ['audit'],
    why: 'The event log is written only by src/events (record, minute counts). The audit area is its reader and keeper: it pages through it (GET /v1/audit_events) and purges it by retention.',
  },
};

test("every module names only the tables its part owns: an area its own table file's (and what ALLOWED gives it), the machinery src/db/tables.ts's", () => {
  assert.deepEqual(tableViolations(ROOT, MACHINERY, ALLOWED).map(describeViolation), []);
});

test('ALLOWED is what the tree needs: without it the check finds exactly the uses it allows (so it sees the real queries)', () => {
  const found = tableViolations(ROOT, MACHINERY, {});
  const files = [...new Set(found.map((v) => v.file))].sort();
  assert.deepEqual(files, ['src/audit/store.ts'], found.map(describeViolation).join('\n'));
  assert.ok(
    found.every((v) => v.table === 'events'),
    found.map(describeViolation).join('\n'),
  );
});

test('a tree that breaks the rule on purpose fails the check, at each break and nowhere else', () => {
  const fixture = path.join(ROOT, 'test/architecture/table-fixture');
  const found = tableViolations(fixture, MACHINERY, {
    events: { areas: ['audit'], why: 'as the real tree' },
    installs: { areas: ['metrics'], why: "an area's table is never another's" },
  })
    .map((v) => `${v.file} ${v.table} ${v.how}`)
    .sort();
  assert.deepEqual(found, [
    'src/dashboards/tables.ts renders interface DB',
    'src/db/lock.ts installs updateTable',
    'src/installs/store.ts jobs deleteFrom',
    'src/installs/tables.ts renders interface DB',
    'src/metrics/points.ts metric_points interface DB',
    'src/metrics/store.ts installs innerJoin',
    'src/metrics/store.ts installs sql.table',
    'src/metrics/store.ts renders preparedInsert',
    'src/metrics/store.ts renders selectFrom',
    'src/metrics/store.ts renders sql',
    'src/metrics/store.ts table selectFrom',
    'test/architecture installs allowance',
  ]);
});
