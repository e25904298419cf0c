import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ServiceDeps } from '../service-deps.js';
import type { DB } from '../db/tables.js';
import type { RequestOrigin } from '../events/record.js';
import type { Role } from '../auth/principal.js';
import type { Principal, WorkspaceContext } from '../auth/principal.js';
import { pathWorkspace, requireRoleOfUser } from '../auth/workspace-context.js';
import { hashToken } from '../auth/credentials.js';
import { isUniqueViolation } from '../db/database.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, notFound, validationError } from '../shared/errors.js';
import { pageById } from '../shared/cursor.js';
import { emailKey, identity } from '../identity/service.js';
import { createSession } from '../sessions/service.js';
import { newEtag } from '../shared/etag.js';
import { hashPassword, passwordMatches } from './passwords.js';
import { createSignInLimits } from './sign-in-limits.js';
import { invitationStore } from './store.js';
import type { AcceptInvitationBody, SetupBody, SignInBody } from './schemas.js';
import { writeTransaction } from '../db/write-transaction.js';

/** docs/spec-gaps.md, "Accounts and sign-in": an invitation is good for seven days. */
export const INVITATION_SECONDS = 7 * 24 * 3600;

/** Who a request comes from, for the session it may make. */
export interface Client {
  ip: string;
  userAgent: string | undefined;
  requestId?: string | undefined;
}

/** A client as its events record it (docs/spec-gaps.md, "Events and the audit log"). */
export const originOfClient = (c: Client): RequestOrigin => ({ requestId: c.requestId ?? '', ip: c.ip, userAgent: c.userAgent?.slice(0, 512) ?? null });

export type AccountDeps = Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'cursors' | 'events'>;

/** Only an owner grants or takes away the owner role (docs/spec-gaps.md, "Accounts and sign-in"). */
export function requireOwnerFor(ctx: WorkspaceContext, ...roles: (Role | null | undefined)[]): void {
  if (roles.includes('owner') && ctx.role !== 'owner') throw new ApiError('OWNER_REQUIRED');
}

export function createAccountService({ db, clock, config, cursors, events }: AccountDeps) {
  /** `recorded`: a sign-in's own session is `session.created`; the session an invitation or the setup makes comes with their event. */
  const session = (trx: Kysely<DB>, userId: string, issuedBy: 'password' | 'oidc', client: Client, recorded = true) =>
    createSession(trx, clock, userId, config.sessions, { issuedBy, ip: client.ip, userAgent: client.userAgent, ...(recorded ? { event: { log: events, origin: originOfClient(client) } } : {}) });

  const limits = createSignInLimits(db, clock);

  /** A sign-in refused for its credentials: recorded, about the user the email names if any. */
  const failed = (client: Client, email: string, userId: string | null) =>
    events.record(db, { workspaceId: null, actor: { kind: 'anonymous', id: null }, credentialId: null, origin: originOfClient(client) }, 'session.failed', userId ?? 'none', {
      email: email.trim().slice(0, 254),
    });

  return {
    /**
     * Signs in with an email and a password. A wrong email and a wrong password are the same
     * 401, in the same time (a decoy hash is checked for an unknown email). Each check holds a
     * place under the failure limits of the client's address and of that address and account
     * (src/accounts/sign-in-limits.ts), taken before any hash is computed; only a wrong password
     * counts as a failure, once it has been checked.
     */
    async signIn(body: SignInBody, client: Client) {
      const attempt = await limits.begin(client.ip, emailKey(body.email));
      let user;
      let right: boolean;
      try {
        user = await identity.userByEmail(db, body.email);
        right = (await passwordMatches(user?.password_hash ?? null, body.password)) && user !== undefined;
      } catch (err) {
        await attempt.end('abandoned');
        throw err;
      }
      await attempt.end(right ? 'succeeded' : 'failed');
      if (!right || !user) {
        await failed(client, body.email, user?.id ?? null);
        throw new ApiError('SIGN_IN_FAILED');
      }
      const s = await session(db, user.id, 'password', client);
      return { id: s.id, token: s.token, user_id: user.id, expires_at: s.expiresAt, csrfToken: s.csrfToken };
    },

    async invite(ctx: WorkspaceContext, rawWorkspaceId: string, body: { email: string; role: Role }) {
      pathWorkspace(ctx, rawWorkspaceId);
      requireOwnerFor(ctx, body.role);
      const now = nowSeconds(clock);
      const secret = `inv_${randomBytes(32).toString('base64url')}`;
      const row = {
        id: newId('inv'),
        workspace_id: ctx.workspaceId,
        email: body.email.trim(),
        email_key: emailKey(body.email),
        role: body.role,
        token_hash: hashToken(secret),
        created_by: ctx.actorId,
        created_at: now,
        expires_at: now + INVITATION_SECONDS,
        accepted_at: null,
        accepted_by: null,
        revoked_at: null,
      };
      await writeTransaction(db, ctx, async (trx) => {
        // Judged again on the caller's role as it is now, under the workspace's lock: an owner
        // demoted since the request began invites no owner.
        if (body.role === 'owner' && ctx.principal.kind !== 'api_token') {
          await identity.lockMemberships(trx, ctx.workspaceId);
          requireOwnerFor({ ...ctx, role: await identity.roleOf(trx, ctx.workspaceId, ctx.principal.userId) }, body.role);
        }
        await invitationStore.insert(trx, row);
        await events.record(trx, ctx, 'invitation.created', row.id, { email: row.email, role: row.role });
      });
      return { id: row.id, email: row.email, role: row.role, expires_at: row.expires_at, url: `${config.publicUrl}/console/invite#${secret}` };
    },

    /** Owners and admins; API tokens by their scope (members:read, checked by the pipeline). The role comes before the path's workspace: 403 before 404. */
    async invitations(ctx: WorkspaceContext, rawWorkspaceId: string, page: { limit: number; cursor: string | undefined }) {
      requireRoleOfUser(ctx, ['owner', 'admin']);
      pathWorkspace(ctx, rawWorkspaceId);
      const now = nowSeconds(clock);
      return pageById(
        cursors,
        `invitations:${ctx.workspaceId}`,
        page,
        (after, take) => invitationStore.pending(db, ctx.workspaceId, now, take, after),
        (r) => r,
      );
    },

    async revokeInvitation(ctx: WorkspaceContext, rawWorkspaceId: string, rawId: string) {
      pathWorkspace(ctx, rawWorkspaceId);
      const id = canonicalId('inv', rawId);
      await writeTransaction(db, ctx, async (trx) => {
        if (!(await invitationStore.revoke(trx, ctx.workspaceId, id, nowSeconds(clock)))) throw notFound('invitation');
        await events.record(trx, ctx, 'invitation.revoked', id);
      });
    },

    /**
     * Accepts an invitation. Signed in, the caller joins (already a member: their role stays).
     * Not signed in, a user is made with the invitation's email, `name` and `password`, and gets
     * a cookie session. Used, revoked or expired: 410; the link is used once, whoever wins.
     */
    async accept(caller: Principal | null, body: AcceptInvitationBody, client: Client) {
      const inv = await invitationStore.byHash(db, hashToken(body.token));
      if (!inv) throw notFound('invitation', ['body', 'token']);
      const now = nowSeconds(clock);
      if (inv.accepted_at !== null || inv.revoked_at !== null || inv.expires_at <= now) throw new ApiError('INVITATION_GONE');
      if (caller?.kind === 'api_token') throw new ApiError('USER_REQUIRED');
      const userId = caller ? caller.userId : newId('usr');
      if (!caller) {
        if (body.name === undefined) throw validationError(['body', 'name'], 'name is required to make a new user (or sign in first)');
        if (body.password === undefined) throw validationError(['body', 'password'], 'password is required to make a new user (or sign in first)');
      }
      const passwordHash = caller ? null : await hashPassword(body.password!);
      const role = await db
        .transaction()
        .execute(async (trx) => {
          if (!(await invitationStore.use(trx, inv.id, userId, now))) throw new ApiError('INVITATION_GONE');
          // The platform sends no email: holding the link proves nothing about its address, so the
          // account holds it unproven (docs/spec-gaps.md, "Whose address is it").
          if (!caller) await identity.createUser(trx, { id: userId, name: body.name!, email: inv.email, emailVerified: false, created_at: now, password_hash: passwordHash });
          const existing = await identity.roleOf(trx, inv.workspace_id, userId);
          const role = existing ?? inv.role;
          if (!existing) await identity.setRole(trx, { workspace_id: inv.workspace_id, user_id: userId, role, created_at: now });
          const source = {
            workspaceId: inv.workspace_id,
            actor: { kind: 'user' as const, id: userId },
            credentialId: caller?.kind === 'session' ? caller.sessionId : null,
            origin: originOfClient(client),
          };
          await events.record(trx, source, 'invitation.accepted', inv.id, { user_id: userId, role, new_user: !caller, already_member: existing !== undefined && existing !== null });
          return role;
        })
        .catch(async (err: unknown) => {
          if (!isUniqueViolation(err)) throw err;
          const holder = await identity.userByEmail(db, inv.email);
          if (holder && holder.email_verified === 0) {
            const how = config.oidc
              ? 'sign in with single sign-on to prove the address is yours (it then moves to you), then accept'
              : 'ask the operator of this server to free it (wsp admin user release-email), then accept';
            throw new ApiError('EMAIL_HELD_UNVERIFIED', {
              message: `An account that never proved it controls ${inv.email} holds it: ${how}`,
              path: ['body', 'token'],
              metadata: { oidc: config.oidc ? 'on' : 'off' },
            });
          }
          throw new ApiError('EMAIL_TAKEN', { message: `A user already has the email ${inv.email}: sign in as them, then accept`, path: ['body', 'token'] });
        });
      const made = caller ? null : await session(db, userId, 'password', client, false);
      return { accepted: { workspace_id: inv.workspace_id, user_id: userId, role, session_id: made?.id ?? null }, session: made };
    },

    /** True while there is no user: the first run is still to do. */
    setupRequired: async () => !(await identity.anyUser(db)),

    /**
     * The first run without an operator (docs/spec-gaps.md, "Accounts and sign-in"): while there is no user, the setup code
     * printed at start makes the first owner, a workspace and a cookie session; afterwards 410.
     */
    async setup(body: SetupBody, client: Client, codeHashes: string[]) {
      if (await identity.anyUser(db)) throw new ApiError('SETUP_DONE');
      if (!codeHashes.includes(hashToken(body.code.trim()))) throw new ApiError('FORBIDDEN', { message: 'The setup code is not the one the server printed at start', path: ['body', 'code'] });
      const now = nowSeconds(clock);
      const userId = newId('usr');
      const ws = { id: newId('ws'), name: body.workspace_name, etag: newEtag(), created_at: now, updated_at: now };
      const passwordHash = await hashPassword(body.password);
      await db.transaction().execute(async (trx) => {
        // The setup is done once: of two at the same time, the second finds the first's user.
        if (!(await identity.claimSetup(trx, now))) throw new ApiError('SETUP_DONE');
        // The holder of the setup code is the server's operator, whose word an address needs (as `wsp admin user create`).
        await identity.createUser(trx, { id: userId, name: body.name, email: body.email, emailVerified: true, created_at: now, password_hash: passwordHash });
        await identity.createWorkspace(trx, ws);
        await identity.setRole(trx, { workspace_id: ws.id, user_id: userId, role: 'owner', created_at: now });
        const source = { workspaceId: ws.id, actor: { kind: 'user' as const, id: userId }, credentialId: null, origin: originOfClient(client) };
        await events.record(trx, source, 'workspace.set_up', ws.id, { name: ws.name, owner: userId });
      });
      const s = await session(db, userId, 'password', client, false);
      return { done: { user_id: userId, workspace_id: ws.id, session_id: s.id }, session: s };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
