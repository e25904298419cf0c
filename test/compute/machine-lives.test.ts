import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, type KyselyPlugin, type PluginTransformQueryArgs, type RootOperationNode } from 'kysely';
import { newId, idFloor } from '../../src/shared/ids.js';
import { machineStore } from '../../src/compute/machines/store.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';

/**
 * The machines_running series reads the lives of the machines (src/compute/machines/store.ts,
 * `lives`): the deletions since `from`, the creations of those machines, and the deletions of
 * machines whose rows remain, each through an index that bounds it by the range or by the
 * machine, not every machine event of the workspace's history (issue 54.4: 2.0-4.4× an empty
 * workspace in bench/growth.ts, every machine.deleted event of 35 days read for 30).
 */
let h: TestDatabase;
before(async () => {
  h = await openTestDatabase();
});
after(() => h.cleanup());

const event = (workspaceId: string, type: string, resourceId: string, at: number, data = '{}') => ({
  id: idFloor('evt', at * 1000).slice(0, -6) + newId('evt').slice(-6),
  workspace_id: workspaceId,
  type,
  actor_kind: 'system',
  actor_id: null,
  credential_id: null,
  resource_type: type.split('.')[0]!,
  resource_id: resourceId,
  request_id: null,
  ip: null,
  user_agent: null,
  created_at: at,
  data,
});

test('machine lives: deleted machines known from their events, and each read of events bounded by the range or by a machine', async () => {
  const db = h.database.db;
  const ws = newId('ws');
  const from = 1_700_000_000;
  const until = from + 30 * 86_400;
  const rows = [];
  // A long history of machines created and deleted before the range.
  for (let i = 0; i < 40; i++) {
    rows.push(event(ws, 'machine.created', `mch_old${i}`, from - 40 * 86_400 + i * 3_600));
    rows.push(event(ws, 'machine.deleted', `mch_old${i}`, from - 30 * 86_400 + i * 3_600));
  }
  // Created before the range, deleted in it; created and deleted in it; deleted after it.
  rows.push(event(ws, 'machine.created', 'mch_a', from - 100, JSON.stringify({ location: 'fsn1' })));
  rows.push(event(ws, 'machine.deleted', 'mch_a', from + 1_000));
  rows.push(event(ws, 'machine.created', 'mch_b', from + 2_000));
  rows.push(event(ws, 'machine.deleted', 'mch_b', from + 3_000));
  rows.push(event(ws, 'machine.created', 'mch_c', from + 4_000));
  rows.push(event(ws, 'machine.deleted', 'mch_c', until + 100));
  await db.insertInto('events').values(rows).execute();

  const statements: { sql: string; parameters: readonly unknown[] }[] = [];
  const ex = db.getExecutor();
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      statements.push(ex.compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const lives = await machineStore.lives(db.withPlugin(plugin), ws, from, until, {});
  assert.deepEqual(
    lives.map((l) => [l.start, l.end, l.region]).sort((x, y) => Number(x[0]) - Number(y[0])),
    [
      [from - 100, from + 1_000, 'fsn1'],
      [from + 2_000, from + 3_000, null],
      [from + 4_000, null, null],
    ],
  );
  if (h.database.engine !== 'sqlite') return;
  for (const s of statements.filter((x) => /\bfrom "events"/.test(x.sql))) {
    const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${s.sql}`, [...s.parameters]));
    const searches = plan.rows.map((r) => r.detail).filter((d) => /^(SEARCH|SCAN) events\b/.test(d));
    assert.ok(searches.length > 0, s.sql);
    for (const d of searches) assert.match(d, /\bid>\?|resource_id=\?/, `${s.sql}\n${d}`);
  }
});
