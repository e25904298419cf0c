import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { openTestDatabase } from '../helpers/harness.js';
import { migrate } from '../../src/db/database.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

test('migration 0012: every render keeps its values, each distinct set stored once per install', async () => {
  const t = await openTestDatabase('0011_session_lifecycle');
  try {
    const db = t.database.db as any;
    await db.insertInto('workspaces').values({ id: 'ws_1', name: 'w', etag: 'e', created_at: 1, updated_at: 1 }).execute();
    await db.insertInto('packages').values({ id: 'pkg_1', workspace_id: 'ws_1', name: 'p', created_at: 1 }).execute();
    await db.insertInto('package_versions').values({ id: 'ver_1', workspace_id: 'ws_1', package_id: 'pkg_1', semver: '1.0.0', files: '{}', created_at: 1 }).execute();
    const install = (id: string) => ({
      id,
      workspace_id: 'ws_1',
      name: id,
      package_id: 'pkg_1',
      desired_version_id: 'ver_1',
      current_version_id: null,
      values_json: '{}',
      automatic_updates_enabled: 0,
      render_seq: 3,
      current_render_seq: 0,
      etag: 'e',
      created_at: 1,
      updated_at: 1,
    });
    await db
      .insertInto('installs')
      .values([install('inst_a'), install('inst_b')])
      .execute();
    const a = '{"who":"a"}';
    const b = '{"who":"b"}';
    // A big one: what the migration exists for.
    const big = JSON.stringify({ blob: 'x'.repeat(100_000) });
    const rows = [
      ['rnd_1', 'inst_a', 1, a],
      ['rnd_2', 'inst_a', 2, a],
      ['rnd_3', 'inst_a', 3, big],
      ['rnd_4', 'inst_b', 1, a],
      ['rnd_5', 'inst_b', 2, big],
      ['rnd_6', 'inst_b', 3, b],
    ] as const;
    await db
      .insertInto('renders')
      .values(
        rows.map(([id, inst, seq, values]) => ({
          id,
          workspace_id: 'ws_1',
          install_id: inst,
          seq,
          package_version_id: 'ver_1',
          values_json: values,
          state: 'succeeded',
          operation_id: `op_${id}`,
          message: 'm',
          created_at: seq,
          updated_at: seq,
        })),
      )
      .execute();

    await migrate(t.database);

    const renders = await db.selectFrom('renders').select(['id', 'values_digest']).orderBy('id').execute();
    assert.deepEqual(
      renders.map((r: { values_digest: string }) => r.values_digest),
      rows.map(([, , , values]) => sha(values)),
    );
    const kept = await db.selectFrom('render_values').select(['install_id', 'digest', 'values_json']).orderBy('install_id').orderBy('values_json').execute();
    assert.deepEqual(
      kept.map((k: { install_id: string; values_json: string }) => [k.install_id, k.values_json]),
      [
        ['inst_a', a],
        ['inst_a', big],
        ['inst_b', a],
        ['inst_b', b],
        ['inst_b', big],
      ].sort((x, y) => (x[0] === y[0] ? (x[1]! < y[1]! ? -1 : 1) : x[0]! < y[0]! ? -1 : 1)),
    );
    for (const k of kept) assert.equal(k.digest, sha(k.values_json));
    const columns = (await t.database.db.introspection.getTables()).find((tb) => tb.name === 'renders')!.columns.map((c) => c.name);
    assert.ok(!columns.includes('values_json'), 'renders no longer carry their values');
  } finally {
    await t.cleanup();
  }
});
