import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from '../helpers/harness.js';
import { migrate } from '../../src/db/database.js';
import { renderStore } from '../../src/installs/renders/store.js';

/**
 * Migration 0034 back-fills render_prefix from the renders already made (docs/decisions.md, "The
 * renders series: day sums kept by the renders' writes"): each key's day sums restart at each UTC
 * day, and the series answers from them what counting the renders answers.
 */
test('migration 0034: the day sums of the renders made before it, each day from its start, under every key', async () => {
  const t = await openTestDatabase('0033_fair_claims');
  try {
    const db = t.database.db;
    await sql`insert into workspaces (id, name, etag, created_at, updated_at) values ('ws_1', 'w', 'e', 1, 1)`.execute(db);
    await sql`insert into packages (id, workspace_id, name, created_at) values ('pkg_1', 'ws_1', 'p', 1)`.execute(db);
    await sql`insert into package_versions (id, workspace_id, package_id, semver, files, created_at) values ('ver_1', 'ws_1', 'pkg_1', '1.0.0', '{}', 1)`.execute(db);
    for (const id of ['inst_a', 'inst_b']) {
      await sql`insert into installs (id, workspace_id, name, package_id, desired_version_id, current_version_id, values_json, automatic_updates_enabled, render_seq, current_render_seq, etag, created_at, updated_at)
        values (${id}, 'ws_1', ${id}, 'pkg_1', 'ver_1', null, '{}', 0, 9, 0, 'e', 1, 1)`.execute(db);
    }
    const DAY = 86_400;
    const d = 20_000 * DAY;
    // [install, seq, state, created_at]: two in one second, one at a day's last second, one the next day.
    const renders = [
      ['inst_a', 1, 'succeeded', d + 10],
      ['inst_a', 2, 'failed', d + 10],
      ['inst_b', 1, 'succeeded', d + 500],
      ['inst_a', 3, 'succeeded', d + DAY - 1],
      ['inst_b', 2, 'queued', d + DAY],
    ] as const;
    for (const [inst, seq, state, at] of renders) {
      await sql`insert into renders (id, workspace_id, install_id, seq, package_version_id, values_digest, state, operation_id, message, created_at, updated_at)
        values (${`rnd_${inst}_${seq}`}, 'ws_1', ${inst}, ${seq}, 'ver_1', 'x', ${state}, ${`op_${inst}_${seq}`}, 'm', ${at}, ${at})`.execute(db);
    }
    await migrate(t.database);
    const rows = (await db.selectFrom('render_prefix').selectAll().execute()).map((r) => `${r.key} ${Number(r.created_at) - d} ${Number(r.p)}`).sort();
    assert.deepEqual(
      rows,
      [
        '* 10 2',
        '* 500 3',
        `* ${DAY - 1} 4`,
        `* ${DAY} 1`,
        'i:inst_a 10 2',
        `i:inst_a ${DAY - 1} 3`,
        'i:inst_b 500 1',
        `i:inst_b ${DAY} 1`,
        'is:inst_a:failed 10 1',
        'is:inst_a:succeeded 10 1',
        `is:inst_a:succeeded ${DAY - 1} 2`,
        'is:inst_b:queued 86400 1',
        'is:inst_b:succeeded 500 1',
        's:failed 10 1',
        's:queued 86400 1',
        's:succeeded 10 1',
        's:succeeded 500 2',
        `s:succeeded ${DAY - 1} 3`,
      ].sort(),
    );
    for (const b of [
      { from: d, step: 3_600, count: 30 },
      { from: d + 9, step: 1, count: 3 },
      { from: d - 100, step: DAY, count: 2 },
    ]) {
      for (const f of [{}, { install: 'inst_a' }, { status: 'succeeded' }, { install: 'inst_b', status: 'queued' }]) {
        const raw = new Array<number>(b.count).fill(0);
        for (const r of await renderStore.countedByBucket(db, 'ws_1', b, f)) if (Number(r.b) >= 0 && Number(r.b) < b.count) raw[Number(r.b)] = Number(r.n);
        assert.deepEqual(
          (await renderStore.countsByBucket(db, 'ws_1', b, f)).map((r) => r.n),
          raw,
          JSON.stringify({ b, f }),
        );
      }
    }
  } finally {
    await t.cleanup();
  }
});
