import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * The embedded default opens and migrates its database without loading the PostgreSQL client:
 * loading `pg` was about 30 ms of `wsp serve`'s start (issue 21, target 6: ready in under 0.5 s),
 * since it reads `navigator`, which makes Node 20 load its fetch implementation. The same process
 * then loads the PostgreSQL side, so the check would see `pg` if it were there.
 */
test('SQLite: openDatabase and migrate load no pg module; the PostgreSQL side does', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-engine-'));
  const script = `
    import { createRequire } from 'node:module';
    const pgModules = () => Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/pg/'));
    const { openDatabase, migrate } = await import(${JSON.stringify(path.join(root, 'src/db/database.ts'))});
    const database = await openDatabase({ dataDir: ${JSON.stringify(dir)} });
    await migrate(database);
    await database.close();
    const sqlite = pgModules();
    await import(${JSON.stringify(path.join(root, 'src/db/postgres.ts'))});
    console.log(JSON.stringify({ sqlite, postgres: pgModules().length }));
  `;
  try {
    const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, env: { ...process.env, DATABASE_URL: '' }, encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    const out = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as { sqlite: string[]; postgres: number };
    assert.deepEqual(out.sqlite, []);
    assert.ok(out.postgres > 0, 'the PostgreSQL side loads pg, so the check can see it');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
