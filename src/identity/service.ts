import { inTransaction } from '../db/database.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Role } from '../auth/principal.js';
import { identityStore } from './store.js';

/**
 * The identity area's public face: users, workspaces, memberships and the external subjects
 * linked to users. Each function takes the database or the caller's transaction first: for the
 * credential lookups the composition root hands to the authenticator, the operator commands
 * and the areas that address people (expiry notices go to owners and admins). The workspaces
 * area reads and renames workspaces through it too: a workspace's row, its memberships and its
 * lock are one set of tables, this area's (src/identity/tables.ts).
 */
/** How emails are compared: trimmed, lower-cased (docs/spec-gaps.md, "Accounts and sign-in": case-insensitive). */
export const emailKey = (email: string) => email.trim().toLowerCase();

export const identity = {
  user: (db: Kysely<DB>, id: string) => identityStore.getUser(db, id),

  workspace: (db: Kysely<DB>, id: string) => identityStore.getWorkspace(db, id),

  /** The workspaces a user belongs to, with the user's role, newest first. */
  workspacesOf: (db: Kysely<DB>, userId: string) => identityStore.workspacesOfUser(db, userId),

  /** Renames a workspace only if its etag is still `expected` (or unconditionally for `*`): false when it is not. */
  renameWorkspace: (db: Kysely<DB>, id: string, name: string, expected: string, etag: string, now: number) => identityStore.renameWorkspace(db, id, name, expected, etag, now),

  /**
   * A new user; `email` becomes its sign-in key (lower-cased), unique: a taken one is a unique
   * violation. `emailVerified`: whether anyone proved the user controls it (a provider vouched, or
   * an operator); every caller decides, since single sign-on links only to a proven address.
   */
  createUser: (db: Kysely<DB>, row: { id: string; name: string | null; email: string | null; emailVerified: boolean; created_at: number; password_hash?: string | null }) =>
    identityStore.insertUser(db, {
      id: row.id,
      name: row.name,
      email: row.email,
      email_key: row.email === null ? null : emailKey(row.email),
      email_verified: row.email !== null && row.emailVerified ? 1 : 0,
      password_hash: row.password_hash ?? null,
      created_at: row.created_at,
    }),

  /** The user's address is proven from now on (single sign-on vouched for it, or an operator). */
  verifyEmail: (db: Kysely<DB>, userId: string) => identityStore.verifyEmail(db, userId),

  /**
   * Frees an address nobody proved from the account holding it, so that its proven owner can have
   * it: the account keeps its memberships and sessions, but no longer signs in by that address.
   * A proven address is never taken. False when there was nothing to free.
   */
  releaseUnverifiedEmail: (db: Kysely<DB>, userId: string) => identityStore.releaseUnverifiedEmail(db, userId),

  /** Whether any user exists: the first-run setup is open until one does. */
  anyUser: (db: Kysely<DB>) => identityStore.anyUser(db),

  claimSetup: (db: Kysely<DB>, now: number) => identityStore.claimSetup(db, now),

  userByEmail: (db: Kysely<DB>, email: string) => identityStore.userByEmailKey(db, emailKey(email)),

  setPasswordHash: (db: Kysely<DB>, userId: string, hash: string) => identityStore.setPasswordHash(db, userId, hash),

  setEmail: (db: Kysely<DB>, userId: string, email: string, verified: boolean) => identityStore.setEmail(db, userId, email, emailKey(email), verified),

  userIdForOidc: (db: Kysely<DB>, issuer: string, subject: string) => identityStore.userIdForOidc(db, issuer, subject),

  linkOidc: (db: Kysely<DB>, row: { issuer: string; subject: string; user_id: string; created_at: number }) => identityStore.linkOidc(db, row),

  members: (db: Kysely<DB>, workspaceId: string, limit: number, afterId: string | null) => identityStore.members(db, workspaceId, limit, afterId),

  member: (db: Kysely<DB>, workspaceId: string, userId: string) => identityStore.member(db, workspaceId, userId),

  /** Changes a member's role; the last owner cannot be demoted. Its own transaction, under the workspace's lock. */
  changeRole: (db: Kysely<DB>, workspaceId: string, userId: string, role: Role) =>
    inTransaction(db, async (trx) => {
      await identityStore.lockWorkspace(trx, workspaceId);
      return identityStore.changeRole(trx, workspaceId, userId, role);
    }),

  /**
   * How many workspaces the user owns, counted with the user's row locked until the caller's
   * transaction ends: call it in the transaction that makes the user owner of a new one, so
   * that parallel creations are counted one after another (WSP_WORKSPACES_PER_USER).
   */
  async lockedOwnedWorkspaceCount(trx: Kysely<DB>, userId: string): Promise<number> {
    await identityStore.lockUser(trx, userId);
    return identityStore.ownedWorkspaceCount(trx, userId);
  },

  /** How many workspaces the user owns now (the quota figures). */
  ownedWorkspaceCount: (db: Kysely<DB>, userId: string) => identityStore.ownedWorkspaceCount(db, userId),

  createWorkspace: (db: Kysely<DB>, row: { id: string; name: string; etag: string; created_at: number; updated_at: number }) => identityStore.insertWorkspace(db, row),

  /** Makes the user a member with `role`, or changes the role of a member. */
  setRole: (db: Kysely<DB>, row: { workspace_id: string; user_id: string; role: Role; created_at: number }) => identityStore.upsertMembership(db, row),

  /**
   * Ends a membership: the user's next request in the workspace is refused. The last owner stays.
   * Its own transaction, under the workspace's lock: two owners removing each other at once
   * leave one of them.
   */
  removeMember: (db: Kysely<DB>, workspaceId: string, userId: string) =>
    inTransaction(db, async (trx) => {
      await identityStore.lockWorkspace(trx, workspaceId);
      return identityStore.deleteMembership(trx, workspaceId, userId);
    }),

  roleOf: (db: Kysely<DB>, workspaceId: string, userId: string) => identityStore.getRole(db, workspaceId, userId),

  /**
   * Locks the workspace's memberships until the caller's transaction ends (call it in the
   * write's transaction, first): a rule judged on roles read after it (only an owner makes or
   * unmakes an owner) cannot be overtaken by another change of those roles before the write.
   */
  lockMemberships: (trx: Kysely<DB>, workspaceId: string) => identityStore.lockWorkspace(trx, workspaceId),

  /**
   * Locks the workspace's row until the caller's transaction ends (call it first in the
   * transaction): the transactions that count a workspace's things and then add one (its
   * quotas) run one after the other. Returns whether the workspace exists.
   */
  lockWorkspace: (trx: Kysely<DB>, workspaceId: string) => identityStore.lockWorkspace(trx, workspaceId),

  /** Every membership of these users, as `workspace_id:role` per user (a user without one is absent). */
  async membershipsOf(db: Kysely<DB>, userIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (userIds.length === 0) return out;
    for (const m of await identityStore.membershipsOf(db, userIds)) {
      const list = out.get(m.user_id) ?? [];
      list.push(`${m.workspace_id}:${m.role}`);
      out.set(m.user_id, list);
    }
    return out;
  },

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
