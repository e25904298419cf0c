import type { Kysely } from 'kysely';
import type { DB, Role, WorkspacesTable } from '../db/tables.js';

/** Users, workspaces, memberships and linked subjects: Kysely queries only. */
export const identityStore = {
  insertUser: (db: Kysely<DB>, row: { id: string; name: string | null; email: string | null; created_at: number }) =>
    db.insertInto('users').values(row).execute(),

  getUser: (db: Kysely<DB>, id: string) => db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),

  insertWorkspace: (db: Kysely<DB>, row: WorkspacesTable) =>
    db.insertInto('workspaces').values(row).execute(),

  getWorkspace: (db: Kysely<DB>, id: string) => db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst(),

  /**
   * Ends a membership, unless it is the workspace's last owner: one statement, so the count and
   * the delete see the same rows. Answers what happened.
   */
  deleteMembership: async (db: Kysely<DB>, workspaceId: string, userId: string): Promise<'removed' | 'last_owner' | 'not_member'> => {
    const owners = db.selectFrom('memberships as m').select((eb) => eb.fn.countAll().as('n')).where('m.workspace_id', '=', workspaceId).where('m.role', '=', 'owner');
    const res = await db
      .deleteFrom('memberships')
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('role', '!=', 'owner'), eb(owners, '>', 1)]))
      .executeTakeFirst();
    if (Number(res.numDeletedRows) > 0) return 'removed';
    const role = await db.selectFrom('memberships').select('role').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
    return role ? 'last_owner' : 'not_member';
  },

  upsertMembership: (db: Kysely<DB>, row: { workspace_id: string; user_id: string; role: Role; created_at: number }) =>
    db
      .insertInto('memberships')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet({ role: row.role }))
      .execute(),

  getRole: async (db: Kysely<DB>, workspaceId: string, userId: string): Promise<Role | null> => {
    const row = await db
      .selectFrom('memberships')
      .select('role')
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.role ?? null;
  },

  /** Users of a workspace holding one of the roles (notices go to owners and admins). */
  usersWithRoles: (db: Kysely<DB>, workspaceId: string, roles: Role[]) =>
    db.selectFrom('memberships').select('user_id').where('workspace_id', '=', workspaceId).where('role', 'in', roles).orderBy('user_id').execute(),

  linkSubject: (db: Kysely<DB>, row: { subject: string; user_id: string; created_at: number }) =>
    db
      .insertInto('external_identities')
      .values(row)
      .onConflict((oc) => oc.column('subject').doUpdateSet({ user_id: row.user_id }))
      .execute(),

  userIdForSubject: async (db: Kysely<DB>, subject: string): Promise<string | null> => {
    const row = await db.selectFrom('external_identities').select('user_id').where('subject', '=', subject).executeTakeFirst();
    return row?.user_id ?? null;
  },
};
