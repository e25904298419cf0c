import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from '../helpers/harness.js';
import { migrate } from '../../src/db/database.js';
import { machineStore } from '../../src/compute/machines/store.js';

/**
 * Migration 0035 back-fills machine_life_prefix from the machines and events already there
 * (docs/decisions.md, "machines_running: a running sum kept by the machines' status changes"):
 * each life as the series read it before, from its row's creation (or, deleted since, its first
 * `machine.created` event, whose cluster and location it is counted under) to its first
 * `machine.deleted` event or, failed or expired, its row's last change if that came first. A
 * life of no length, and a machine known only by its creation, add nothing.
 */
test('migration 0035: the machines alive at each second before it, under every key', async () => {
  const t = await openTestDatabase('0034_render_prefix');
  try {
    const db = t.database.db;
    await sql`insert into workspaces (id, name, etag, created_at, updated_at) values ('ws_1', 'w', 'e', 1, 1)`.execute(db);
    await sql`insert into clusters (id, workspace_id, name, description, region, is_default, etag, created_at, updated_at) values ('cl_a', 'ws_1', 'default', null, null, 1, 'e', 1, 1)`.execute(db);
    await sql`insert into compute_configs (id, workspace_id, name, provider, region, image, machine_type_filter, secret_id, etag, created_at, updated_at)
              values ('cc_1', 'ws_1', 'web', 'hetzner', 'fsn1', 'ubuntu-24.04', '*', null, 'e', 1, 1)`.execute(db);
    const d = 1_700_000_000;
    // [id, status, created_at, updated_at]
    const rows = [
      ['mch_run', 'running', 10, 10],
      ['mch_failed', 'failed', 20, 50],
      ['mch_deleting', 'deleting', 30, 70],
      ['mch_failed_deleted', 'failed', 40, 90],
      ['mch_instant', 'failed', 100, 100],
    ] as const;
    for (const [id, status, created, updated] of rows) {
      await sql`insert into machines (id, workspace_id, compute_config_id, cluster_id, provider, hostname, server_type, location, image, status, etag, created_at, updated_at)
                values (${id}, 'ws_1', 'cc_1', 'cl_a', 'hetzner', ${id}, 'cx22', 'fsn1', 'ubuntu-24.04', ${status}, 'e', ${d + created}, ${d + updated})`.execute(db);
    }
    let n = 0;
    const event = (type: string, resource: string, at: number, data: object = {}) =>
      sql`insert into events (id, workspace_id, type, actor_kind, actor_id, credential_id, resource_type, resource_id, request_id, ip, user_agent, created_at, data)
          values (${`evt_${String(++n).padStart(26, '0')}`}, 'ws_1', ${type}, 'system', null, null, 'machine', ${resource}, null, null, null, ${d + at}, ${JSON.stringify(data)})`.execute(db);
    await event('machine.deleted', 'mch_deleting', 70);
    // Failed at 80 (its row's change since moved on to 90), deleted at 80: ended at 80.
    await event('machine.deleted', 'mch_failed_deleted', 80);
    // Deleted since: known by its events, under the cluster and location its creation names.
    await event('machine.created', 'mch_gone', 5, { cluster_id: 'cl_b', location: 'nbg1' });
    await event('machine.deleted', 'mch_gone', 60);
    // Older, its creation naming neither: counted only unfiltered.
    await event('machine.created', 'mch_old', 1);
    await event('machine.deleted', 'mch_old', 2);
    // Known only by its creation: nothing says when it ended; not counted.
    await event('machine.created', 'mch_unknown', 3, { cluster_id: 'cl_a', location: 'fsn1' });
    await migrate(t.database);

    const kept = (await db.selectFrom('machine_life_prefix').selectAll().where('key', '=', '*').orderBy('at').execute()).map((r) => `${Number(r.at) - d} ${Number(r.p)}`);
    assert.deepEqual(kept, ['1 1', '2 0', '5 1', '10 2', '20 3', '30 4', '40 5', '50 4', '60 3', '70 2', '80 1']);
    const at = (...s: number[]) => s.map((x) => d + x);
    assert.deepEqual(await machineStore.aliveAt(db, 'ws_1', at(0, 1, 2, 5, 49, 50, 59, 60, 79, 80, 100, 1000), {}), [0, 1, 0, 1, 5, 4, 4, 3, 2, 1, 1, 1]);
    assert.deepEqual(await machineStore.aliveAt(db, 'ws_1', at(1, 5, 10, 40, 80), { cluster: 'cl_a' }), [0, 0, 1, 4, 1]);
    assert.deepEqual(await machineStore.aliveAt(db, 'ws_1', at(1, 5, 10, 60), { cluster: 'cl_b' }), [0, 1, 1, 0]);
    assert.deepEqual(await machineStore.aliveAt(db, 'ws_1', at(5, 10, 59), { region: 'nbg1' }), [1, 1, 1]);
    assert.deepEqual(await machineStore.aliveAt(db, 'ws_1', at(5, 40), { cluster: 'cl_b', region: 'fsn1' }), [0, 0]);
    assert.deepEqual(await machineStore.aliveAt(db, 'ws_1', at(5, 40), { cluster: 'cl_a', region: 'fsn1' }), [0, 4]);
    // The writes carry it on from the back-filled sums.
    await machineStore.transition(db, 'mch_run', 'running', { status: 'deleting', updated_at: d + 200 });
    assert.deepEqual(await machineStore.aliveAt(db, 'ws_1', at(199, 200), {}), [1, 0]);
  } finally {
    await t.cleanup();
  }
});
