import type { Kysely } from 'kysely';
import type { DB, Role } from '../db/tables.js';
import { identityStore } from './store.js';

/**
 * The identity area's public face: users, workspaces, memberships and the external subjects
 * linked to users. Each function takes the database or the caller's transaction first: for the
 * credential lookups the composition root hands to the authenticator, the operator commands
 * and the areas that address people (expiry notices go to owners and admins).
 */
export const identity = {
  user: (db: Kysely<DB>, id: string) => identityStore.getUser(db, id),

  workspace: (db: Kysely<DB>, id: string) => identityStore.getWorkspace(db, id),

  createUser: (db: Kysely<DB>, row: { id: string; name: string | null; email: string | null; created_at: number }) => identityStore.insertUser(db, row),

  createWorkspace: (db: Kysely<DB>, row: { id: string; name: string; etag: string; created_at: number; updated_at: number }) => identityStore.insertWorkspace(db, row),

  /** Makes the user a member with `role`, or changes the role of a member. */
  setRole: (db: Kysely<DB>, row: { workspace_id: string; user_id: string; role: Role; created_at: number }) => identityStore.upsertMembership(db, row),

  /** Ends a membership: the user's next request in the workspace is refused. The last owner stays. */
  removeMember: (db: Kysely<DB>, workspaceId: string, userId: string) => identityStore.deleteMembership(db, workspaceId, userId),

  roleOf: (db: Kysely<DB>, workspaceId: string, userId: string) => identityStore.getRole(db, workspaceId, userId),

  /** The ids of the workspace's members holding one of `roles`, in id order. */
  async usersWithRoles(db: Kysely<DB>, workspaceId: string, roles: Role[]): Promise<string[]> {
    return (await identityStore.usersWithRoles(db, workspaceId, roles)).map((r) => r.user_id);
  },

  linkSubject: (db: Kysely<DB>, row: { subject: string; user_id: string; created_at: number }) => identityStore.linkSubject(db, row),

  /** The user a JWT's `sub` names: a user id itself (`usr_...`), else the user it was linked to. */
  async userForSubject(db: Kysely<DB>, subject: string): Promise<string | null> {
    const own = subject.startsWith('usr_') ? ((await identityStore.getUser(db, subject))?.id ?? null) : null;
    return own ?? identityStore.userIdForSubject(db, subject);
  },
};
