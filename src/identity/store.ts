import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { settingsStore } from '../db/settings.js';
import { ifEtag } from '../db/database.js';
import type { Role } from '../auth/principal.js';
import type { WorkspacesTable } from './tables.js';

const memberView = (db: Kysely<DB>) =>
  db.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id').select(['m.user_id as id', 'u.email', 'u.name', 'm.role', 'm.created_at as joined_at']);

/** Users, workspaces, memberships and linked subjects: Kysely queries only. */
export const identityStore = {
  insertUser: (db: Kysely<DB>, row: { id: string; name: string | null; email: string | null; email_key: string | null; password_hash: string | null; email_verified: number; created_at: number }) =>
    db.insertInto('users').values(row).execute(),

  /** Marks the user's address proven; false when the user does not exist. */
  verifyEmail: async (db: Kysely<DB>, userId: string): Promise<boolean> =>
    Number((await db.updateTable('users').set({ email_verified: 1 }).where('id', '=', userId).where('email', 'is not', null).executeTakeFirst()).numUpdatedRows) > 0,

  /** Takes an unproven address from its account (a proven one is never taken): false when there was none to take. */
  releaseUnverifiedEmail: async (db: Kysely<DB>, userId: string): Promise<boolean> =>
    Number(
      (await db.updateTable('users').set({ email: null, email_key: null }).where('id', '=', userId).where('email_verified', '=', 0).where('email', 'is not', null).executeTakeFirst()).numUpdatedRows,
    ) > 0,

  userByEmailKey: (db: Kysely<DB>, emailKey: string) => db.selectFrom('users').selectAll().where('email_key', '=', emailKey).executeTakeFirst(),

  setPasswordHash: async (db: Kysely<DB>, userId: string, hash: string): Promise<boolean> =>
    Number((await db.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).executeTakeFirst()).numUpdatedRows) > 0,

  setEmail: (db: Kysely<DB>, userId: string, email: string, emailKey: string, verified: boolean) =>
    db
      .updateTable('users')
      .set({ email, email_key: emailKey, email_verified: verified ? 1 : 0 })
      .where('id', '=', userId)
      .execute(),

  userIdForOidc: async (db: Kysely<DB>, issuer: string, subject: string): Promise<string | null> =>
    (await db.selectFrom('oidc_identities').select('user_id').where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst())?.user_id ?? null,

  linkOidc: (db: Kysely<DB>, row: { issuer: string; subject: string; user_id: string; created_at: number }) =>
    db
      .insertInto('oidc_identities')
      .values(row)
      .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
      .execute(),

  /** The workspace's members with who they are, by user id after `afterId`. */
  members: (db: Kysely<DB>, workspaceId: string, limit: number, afterId: string | null) => {
    let q = memberView(db).where('m.workspace_id', '=', workspaceId);
    if (afterId) q = q.where('m.user_id', '>', afterId);
    return q.orderBy('m.user_id').limit(limit).execute();
  },

  member: (db: Kysely<DB>, workspaceId: string, userId: string) => memberView(db).where('m.workspace_id', '=', workspaceId).where('m.user_id', '=', userId).executeTakeFirst(),

  /**
   * Holds the user's row until the transaction ends (an UPDATE that changes nothing, as
   * lockWorkspace does): the transactions that count what a user owns and add one wait in turn.
   */
  lockUser: async (db: Kysely<DB>, userId: string): Promise<boolean> =>
    Number(
      (
        await db
          .updateTable('users')
          .set({ name: sql`name` })
          .where('id', '=', userId)
          .executeTakeFirst()
      ).numUpdatedRows,
    ) > 0,

  ownedWorkspaceCount: async (db: Kysely<DB>, userId: string): Promise<number> =>
    Number(
      (
        await db
          .selectFrom('memberships')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('user_id', '=', userId)
          .where('role', '=', 'owner')
          .executeTakeFirstOrThrow()
      ).n,
    ),

  /**
   * Serializes the transactions that count a workspace's things and then add or change one (its
   * owners, its quotas of API tokens and webhooks): call it first in the transaction. On
   * PostgreSQL an UPDATE that changes nothing takes the workspace row's lock until the transaction
   * ends, so a second counter waits and then counts the first one's row; SQLite's transactions
   * hold its one write lock already (BEGIN IMMEDIATE). Without it, READ COMMITTED lets two
   * transactions each count the other's row as absent and both pass a quota by one.
   * Membership changes that count owners run under it: two owners demoting each other at once
   * would each see the other still owner. Returns whether the workspace exists.
   */
  lockWorkspace: async (db: Kysely<DB>, workspaceId: string): Promise<boolean> => {
    const res = await db
      .updateTable('workspaces')
      .set({ etag: sql`etag` })
      .where('id', '=', workspaceId)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Changes a member's role, unless that demotes the last owner. Call with the workspace locked. */
  changeRole: async (db: Kysely<DB>, workspaceId: string, userId: string, role: Role): Promise<'changed' | 'last_owner' | 'not_member'> => {
    const current = await db.selectFrom('memberships').select('role').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
    if (!current) return 'not_member';
    if (current.role === 'owner' && role !== 'owner') {
      const owners = await db
        .selectFrom('memberships')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow();
      if (Number(owners.n) <= 1) return 'last_owner';
    }
    await db.updateTable('memberships').set({ role }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
    return 'changed';
  },

  anyUser: async (db: Kysely<DB>): Promise<boolean> => (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined,

  /** Records that the first-run setup happened; false when it already had. */
  claimSetup: (db: Kysely<DB>, now: number): Promise<boolean> => settingsStore.claim(db, 'setup_done', String(now)),

  getUser: (db: Kysely<DB>, id: string) => db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),

  insertWorkspace: (db: Kysely<DB>, row: WorkspacesTable) => db.insertInto('workspaces').values(row).execute(),

  getWorkspace: (db: Kysely<DB>, id: string) => db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst(),

  /** The workspaces a user belongs to, with the user's role. */
  workspacesOfUser: (db: Kysely<DB>, userId: string) =>
    db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .select(['workspaces.id', 'workspaces.name', 'workspaces.etag', 'workspaces.created_at', 'workspaces.updated_at', 'memberships.role'])
      .where('memberships.user_id', '=', userId)
      .orderBy('workspaces.id', 'desc')
      .execute(),

  /** Conditional rename: only if the etag is still `expected` (or unconditionally for `*`). */
  renameWorkspace: async (db: Kysely<DB>, id: string, name: string, expected: string, etag: string, now: number): Promise<boolean> => {
    const res = await db.updateTable('workspaces').set({ name, etag, updated_at: now }).where('id', '=', id).$call(ifEtag(expected)).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /**
   * Ends a membership, unless it is the workspace's last owner: one statement, so the count and
   * the delete see the same rows. Answers what happened.
   */
  deleteMembership: async (db: Kysely<DB>, workspaceId: string, userId: string): Promise<'removed' | 'last_owner' | 'not_member'> => {
    const owners = db
      .selectFrom('memberships as m')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('m.workspace_id', '=', workspaceId)
      .where('m.role', '=', 'owner');
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
    const row = await db.selectFrom('memberships').select('role').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
    return row?.role ?? null;
  },

  /** Every membership of these users (one statement). */
  membershipsOf: (db: Kysely<DB>, userIds: readonly string[]) => db.selectFrom('memberships').select(['user_id', 'workspace_id', 'role']).where('user_id', 'in', userIds).execute(),

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
