import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCodes } from '../../src/shared/errors.js';
import { REPO_ROOT } from '../../scripts/repo-root.js';

/** docs/errors.md lists every code of src/shared/errors.ts, with its HTTP status and name. */
const root = REPO_ROOT;

function rows(): Map<number, { status: number; name: string; meaning: string }> {
  const text = fs.readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
  const lines = text.split('\n');
  const header = lines.findIndex((l) => /^\|\s*code\s*\|\s*HTTP status\s*\|\s*name\s*\|\s*meaning\s*\|\s*$/.test(l));
  assert.ok(header >= 0, 'docs/errors.md has the table | code | HTTP status | name | meaning |');
  const out = new Map<number, { status: number; name: string; meaning: string }>();
  for (const line of lines.slice(header + 2)) {
    const m = /^\|\s*(\d{4})\s*\|\s*(\d{3})\s*\|\s*([A-Z0-9_]+)\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (!m) continue;
    const code = Number(m[1]);
    assert.ok(!out.has(code), `code ${code} is listed twice`);
    out.set(code, { status: Number(m[2]), name: m[3]!, meaning: m[4]! });
  }
  return out;
}

test('codes are unique in src/shared/errors.ts', () => {
  const codes = Object.values(ErrorCodes).map((c) => c.code);
  assert.equal(new Set(codes).size, codes.length);
});

test('every code is in docs/errors.md with its HTTP status and name', () => {
  const documented = rows();
  const missing: string[] = [];
  for (const [name, def] of Object.entries(ErrorCodes)) {
    const row = documented.get(def.code);
    if (!row) missing.push(`${def.code} ${name}: no row`);
    else {
      if (row.status !== def.status) missing.push(`${def.code} ${name}: status ${row.status} in the doc, ${def.status} in the code`);
      if (row.name !== name) missing.push(`${def.code}: named ${row.name} in the doc, ${name} in the code`);
      if (row.meaning.length < 5) missing.push(`${def.code} ${name}: no meaning`);
    }
  }
  assert.deepEqual(missing, []);
});

test('docs/errors.md lists no code that does not exist', () => {
  const known = new Set<number>(Object.values(ErrorCodes).map((c) => c.code));
  const stale = [...rows().keys()].filter((c) => !known.has(c));
  assert.deepEqual(stale, []);
});
