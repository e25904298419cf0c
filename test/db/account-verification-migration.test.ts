import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from '../helpers/harness.js';
import { migrate } from '../../src/db/database.js';

/**
 * Migration 0021: users who existed before it are taken as having proven their address, except
 * those the audit log shows an invitation made (accepted signed out: `new_user: true`), whom
 * single sign-on must not find by their address from now on.
 */
test('existing users: proven, except those an invitation made; users without an email are not', async () => {
  const t = await openTestDatabase('0020_revision_list_versions');
  try {
    const db = t.database.db;
    const user = (id: string, email: string | null) =>
      sql`insert into users (id, name, email, email_key, password_hash, created_at) values (${id}, ${id}, ${email}, ${email?.toLowerCase() ?? null}, null, 1)`.execute(db);
    await user('usr_operator', 'Operator@corp.test');
    await user('usr_invited', 'invited@corp.test');
    await user('usr_joined', 'joined@corp.test');
    await user('usr_nomail', null);
    const event = (id: string, actor: string, data: object) =>
      sql`insert into events (id, workspace_id, type, actor_kind, actor_id, credential_id, resource_type, resource_id, request_id, ip, user_agent, created_at, data)
          values (${id}, 'ws_1', 'invitation.accepted', 'user', ${actor}, null, 'invitation', 'inv_1', null, null, null, 1, ${JSON.stringify(data)})`.execute(db);
    await event('evt_1', 'usr_invited', { user_id: 'usr_invited', role: 'member', new_user: true, already_member: false });
    // Signed in when they accepted: their account was made otherwise.
    await event('evt_2', 'usr_joined', { user_id: 'usr_joined', role: 'member', new_user: false, already_member: false });
    await migrate(t.database);
    const rows = await db.selectFrom('users').select(['id', 'email_verified']).orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.id, Number(r.email_verified)]),
      [
        ['usr_invited', 0],
        ['usr_joined', 1],
        ['usr_nomail', 0],
        ['usr_operator', 1],
      ],
    );
  } finally {
    await t.cleanup();
  }
});
