import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from '../helpers/harness.js';
import { migrate } from '../../src/db/database.js';

/**
 * Migration 0024 (docs/spec-gaps.md, "Roles (issue 50)"): `memberships.role` accepts `viewer`,
 * every membership made before keeps its role, and the CHECK still refuses what is no role.
 */
test('memberships survive the widened CHECK; viewer is accepted, an unknown role still refused', async () => {
  const t = await openTestDatabase('0023_workspace_limits');
  try {
    const db = t.database.db;
    await sql`insert into workspaces (id, name, etag, created_at, updated_at) values ('ws_1', 'Acme', 'e', 1, 1)`.execute(db);
    for (const id of ['usr_a', 'usr_b', 'usr_c', 'usr_d']) await sql`insert into users (id, name, email, email_key, password_hash, created_at) values (${id}, ${id}, null, null, null, 1)`.execute(db);
    const member = (user: string, role: string) => sql`insert into memberships (workspace_id, user_id, role, created_at) values ('ws_1', ${user}, ${role}, 7)`.execute(db);
    await member('usr_a', 'owner');
    await member('usr_b', 'member');
    await assert.rejects(member('usr_c', 'viewer'), 'before 0024 the CHECK refuses viewer');
    await migrate(t.database);
    await member('usr_c', 'viewer');
    await assert.rejects(member('usr_d', 'superuser'));
    const rows = await db.selectFrom('memberships').select(['user_id', 'role', 'created_at']).orderBy('user_id').execute();
    assert.deepEqual(
      rows.map((r) => [r.user_id, r.role, Number(r.created_at)]),
      [
        ['usr_a', 'owner', 7],
        ['usr_b', 'member', 7],
        ['usr_c', 'viewer', 7],
      ],
    );
    // The user's index and the cascade from users came through the rebuild.
    await sql`delete from users where id = 'usr_b'`.execute(db);
    assert.equal((await db.selectFrom('memberships').select('user_id').where('user_id', '=', 'usr_b').execute()).length, 0);
  } finally {
    await t.cleanup();
  }
});
