import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Role } from '../auth/principal.js';
import { newId } from '../shared/ids.js';
import { newEtag } from '../shared/etag.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { MAX_SUBJECT_LENGTH } from '../auth/credentials.js';
import { identity } from '../identity/service.js';
import { AdminError } from '../shared/errors.js';
import { createSession, endSessionById, endSessionsOf, type SessionPolicy } from '../sessions/service.js';
import { loadConfig } from '../config.js';
import { issueApiToken } from '../tokens/service.js';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from '../accounts/passwords.js';
import { EventLog, type EventSource } from '../events/record.js';

/** The API's email shape (src/accounts/schemas.ts). */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Re-exported for the operator commands' callers: areas throw it too (src/shared/errors.ts). */
export { AdminError };

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

/** What the operator's own changes to a user record as their actor: the platform's operator, not a user. */
const OPERATOR: EventSource = { workspaceId: null, actor: { kind: 'system', id: null }, credentialId: null };

/** The operator commands of docs/spec-gaps.md, "Credentials and tokens", usable from the CLI and from tests alike. */
export function createAdminService(db: Kysely<DB>, clock: Clock, sessions: SessionPolicy = loadConfig({}).sessions) {
  const now = () => nowSeconds(clock);
  // A user's own events belong to no workspace: nothing subscribes to them.
  const events = new EventLog(clock);

  async function requireUser(userId: string) {
    const user = await identity.user(db, userId);
    if (!user) throw new AdminError(`unknown user ${userId}`);
    return user;
  }

  const service = {
    async createWorkspace(name: string): Promise<{ workspace_id: string }> {
      if (!name.trim()) throw new AdminError('a workspace needs a non-empty --name');
      // The API's bound on a workspace name (PATCH /v1/workspaces/{id}) holds here too.
      if (name.length > 100) throw new AdminError('a workspace name is at most 100 characters');
      const id = newId('ws');
      const t = now();
      await identity.createWorkspace(db, { id, name, etag: newEtag(), created_at: t, updated_at: t });
      return { workspace_id: id };
    },

    async createUser(opts: { name?: string | undefined; email?: string | undefined } = {}): Promise<{ user_id: string }> {
      const id = newId('usr');
      if (opts.email !== undefined && !EMAIL.test(opts.email)) throw new AdminError(`--email must be an email address, got "${opts.email.slice(0, 100)}"`);
      if (opts.email !== undefined && (await identity.userByEmail(db, opts.email))) throw new AdminError(`a user already has the email ${opts.email}`);
      // An operator vouches for the address they give (docs/spec-gaps.md, "Whose address is it").
      await identity.createUser(db, { id, name: opts.name ?? null, email: opts.email ?? null, emailVerified: true, created_at: now() });
      return { user_id: id };
    },

    /** The operator has checked that the user controls their address: single sign-on may now find them by it. */
    async verifyEmail(userId: string): Promise<{ user_id: string; email: string; email_verified: true }> {
      const user = await requireUser(userId);
      if (user.email === null) throw new AdminError(`${userId} has no email to verify`);
      if (user.email_verified === 0) {
        await db.transaction().execute(async (trx) => {
          await identity.verifyEmail(trx, userId);
          await events.record(trx, OPERATOR, 'user.email_verified', userId, { email: user.email, method: 'operator' });
        });
      }
      return { user_id: userId, email: user.email, email_verified: true };
    },

    /**
     * Takes an address nobody proved from the account holding it, so that its owner can accept an
     * invitation with it. A proven address is never taken here.
     */
    async releaseEmail(userId: string): Promise<{ user_id: string; released: string }> {
      const user = await requireUser(userId);
      if (user.email === null) throw new AdminError(`${userId} has no email`);
      if (user.email_verified === 1) throw new AdminError(`the address of ${userId} is proven (by single sign-on or an operator); it is not taken from them`);
      await db.transaction().execute(async (trx) => {
        if (!(await identity.releaseUnverifiedEmail(trx, userId))) throw new AdminError(`the address of ${userId} changed meanwhile; run the command again`);
        await events.record(trx, OPERATOR, 'user.email_released', userId, { email: user.email, method: 'operator' });
      });
      return { user_id: userId, released: user.email };
    },

    /** Sets (or replaces) a user's password: docs/spec-gaps.md, "Accounts and sign-in"'s 12-256 characters, hashed with argon2id. */
    async setPassword(userId: string, password: string): Promise<{ user_id: string; password_set: true }> {
      if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) throw new AdminError(`a password is ${PASSWORD_MIN}-${PASSWORD_MAX} characters; this one is ${password.length}`);
      await requireUser(userId);
      await identity.setPasswordHash(db, userId, await hashPassword(password));
      return { user_id: userId, password_set: true };
    },

    async linkSubject(userId: string, subject: string): Promise<{ user_id: string; subject: string }> {
      if (!subject) throw new AdminError('--subject must not be empty');
      // A JWT whose sub is longer is refused (401) by the authenticator: such a link could never be used.
      if (subject.length > MAX_SUBJECT_LENGTH) {
        throw new AdminError(`--subject is ${subject.length} characters; a JWT subject is at most ${MAX_SUBJECT_LENGTH}`);
      }
      await requireUser(userId);
      await identity.linkSubject(db, { subject, user_id: userId, created_at: now() });
      return { user_id: userId, subject };
    },

    async addMember(workspaceId: string, userId: string, role: string): Promise<{ workspace_id: string; user_id: string; role: Role }> {
      if (!ROLES.includes(role as Role)) throw new AdminError(`role must be one of ${ROLES.join(', ')}, not "${role}"`);
      if (!(await identity.workspace(db, workspaceId))) throw new AdminError(`unknown workspace ${workspaceId}`);
      await requireUser(userId);
      await identity.setRole(db, { workspace_id: workspaceId, user_id: userId, role: role as Role, created_at: now() });
      return { workspace_id: workspaceId, user_id: userId, role: role as Role };
    },

    async removeMember(workspaceId: string, userId: string): Promise<{ workspace_id: string; user_id: string; removed: true }> {
      if (!(await identity.workspace(db, workspaceId))) throw new AdminError(`unknown workspace ${workspaceId}`);
      await requireUser(userId);
      const outcome = await identity.removeMember(db, workspaceId, userId);
      if (outcome === 'not_member') throw new AdminError(`${userId} is not a member of ${workspaceId}`);
      if (outcome === 'last_owner') throw new AdminError(`${userId} is the last owner of ${workspaceId}; make another member owner first`);
      return { workspace_id: workspaceId, user_id: userId, removed: true };
    },

    /** Ends one session, or every session of a user: their tokens are refused from the next request on. */
    async revokeSession(sessionId: string): Promise<{ session_id: string; revoked: 1 }> {
      if (!(await endSessionById(db, sessionId))) throw new AdminError(`unknown session ${sessionId}`);
      return { session_id: sessionId, revoked: 1 };
    },

    async revokeSessionsOf(userId: string): Promise<{ user_id: string; revoked: number }> {
      await requireUser(userId);
      return { user_id: userId, revoked: await endSessionsOf(db, userId) };
    },

    async createSession(userId: string): Promise<{ session_token: string }> {
      await requireUser(userId);
      const { token } = await createSession(db, clock, userId, sessions, { issuedBy: 'operator' });
      return { session_token: token };
    },

    /** A workspace API token made by an operator (`created_by` is the user it is made for). */
    async createApiToken(workspaceId: string, createdBy: string, name: string): Promise<{ id: string; token: string }> {
      const { id, token } = await issueApiToken(db, { workspaceId, name, createdBy, expiresAt: null, now: now() });
      return { id, token };
    },

    /**
     * All of it or nothing: one transaction, so a failure leaves no half-made workspace behind.
     * Once the database has a user it is refused unless forced (docs/spec-gaps.md, "Accounts and sign-in"); an email and a
     * password let the owner sign in (POST /v1/sessions).
     */
    async bootstrap(
      opts: { force?: boolean; email?: string | undefined; password?: string | undefined } = {},
    ): Promise<{ workspace_id: string; user_id: string; session_token: string; api_token: string }> {
      if (!opts.force && (await identity.anyUser(db))) throw new AdminError('the database already has users: bootstrap is for the first run (--force makes another workspace and owner anyway)');
      if (opts.password !== undefined && (opts.password.length < PASSWORD_MIN || opts.password.length > PASSWORD_MAX)) {
        throw new AdminError(`a password is ${PASSWORD_MIN}-${PASSWORD_MAX} characters; this one is ${opts.password.length}`);
      }
      const passwordHash = opts.password === undefined ? undefined : await hashPassword(opts.password);
      return db.transaction().execute(async (trx) => {
        const inTrx = createAdminService(trx, clock, sessions);
        const { workspace_id } = await inTrx.createWorkspace('Default workspace');
        const { user_id } = await inTrx.createUser({ name: 'Owner', email: opts.email });
        if (passwordHash !== undefined) await identity.setPasswordHash(trx, user_id, passwordHash);
        await inTrx.addMember(workspace_id, user_id, 'owner');
        const { session_token } = await inTrx.createSession(user_id);
        const { token } = await inTrx.createApiToken(workspace_id, user_id, 'bootstrap');
        return { workspace_id, user_id, session_token, api_token: token };
      });
    },
  };
  return service;
}

export type AdminService = ReturnType<typeof createAdminService>;
