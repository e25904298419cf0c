import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from '../helpers/harness.js';
import { migrate } from '../../src/db/database.js';

/**
 * Migration 0028 (docs/spec-gaps.md, "Clusters and regions"): each workspace's default cluster
 * keeps its id, name and machines and gains a null region and description, an etag of its own and
 * `updated_at` = `created_at`; names become unique per workspace; installs gain a null cluster_id.
 * (test/faults/upgrade.test.ts reads a whole database of the previous release through the API.)
 */
test('default clusters and their machines come through 0028; names unique per workspace afterwards', async () => {
  const t = await openTestDatabase('0025_deleted_installs');
  try {
    const db = t.database.db;
    for (const ws of ['ws_1', 'ws_2']) await sql`insert into workspaces (id, name, etag, created_at, updated_at) values (${ws}, ${ws}, 'e', 1, 1)`.execute(db);
    await sql`insert into clusters (id, workspace_id, name, is_default, created_at) values ('cl_1', 'ws_1', 'default', 1, 100), ('cl_2', 'ws_2', 'default', 1, 200)`.execute(db);
    await sql`insert into compute_configs (id, workspace_id, name, provider, region, image, machine_type_filter, secret_id, etag, created_at, updated_at)
              values ('cc_1', 'ws_1', 'web', 'hetzner', 'fsn1', 'ubuntu-24.04', '*', null, 'e', 1, 1)`.execute(db);
    await sql`insert into machines (id, workspace_id, compute_config_id, cluster_id, provider, hostname, server_type, location, image, status, etag, created_at, updated_at)
              values ('mch_1', 'ws_1', 'cc_1', 'cl_1', 'hetzner', 'web-1', 'cx22', 'fsn1', 'ubuntu-24.04', 'running', 'e', 1, 1)`.execute(db);
    await migrate(t.database);
    const rows = await db.selectFrom('clusters').selectAll().orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.id, r.workspace_id, r.name, r.is_default, r.region, r.description, Number(r.created_at), Number(r.updated_at)]),
      [
        ['cl_1', 'ws_1', 'default', 1, null, null, 100, 100],
        ['cl_2', 'ws_2', 'default', 1, null, null, 200, 200],
      ],
    );
    assert.ok(
      rows.every((r) => /^[A-Za-z0-9_-]{16}$/.test(r.etag)),
      'each an etag as src/shared/etag.ts makes them',
    );
    assert.notEqual(rows[0]!.etag, rows[1]!.etag);
    assert.equal((await db.selectFrom('machines').select('cluster_id').where('id', '=', 'mch_1').executeTakeFirstOrThrow()).cluster_id, 'cl_1');
    // Names are unique in a workspace now, not across workspaces.
    const cluster = (id: string, ws: string, name: string) =>
      sql`insert into clusters (id, workspace_id, name, description, region, is_default, etag, created_at, updated_at) values (${id}, ${ws}, ${name}, null, 'nbg1', 0, 'e', 1, 1)`.execute(db);
    await cluster('cl_3', 'ws_1', 'prod');
    await cluster('cl_4', 'ws_2', 'prod');
    await assert.rejects(cluster('cl_5', 'ws_1', 'prod'));
    // Still one default per workspace.
    await assert.rejects(
      sql`insert into clusters (id, workspace_id, name, description, region, is_default, etag, created_at, updated_at) values ('cl_6', 'ws_1', 'other', null, null, 1, 'e', 1, 1)`.execute(db),
    );
    const columns = await sql<{ n: number }>`select count(*) as n from installs where cluster_id is not null`.execute(db);
    assert.equal(Number(columns.rows[0]!.n), 0);
  } finally {
    await t.cleanup();
  }
});
