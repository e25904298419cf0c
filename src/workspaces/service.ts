import { sourceOf } from '../events/record.js';
import type { ServiceDeps } from '../service-deps.js';
import type { RequestContext, WorkspaceContext } from '../auth/principal.js';
import { canonicalId, newId } from '../shared/ids.js';
import { pathWorkspace, requireRole } from '../auth/workspace-context.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, notFound } from '../shared/errors.js';
import { pageById } from '../shared/cursor.js';
import { identity } from '../identity/service.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Role } from '../auth/principal.js';
import { etagMismatch, newEtag, parseIfMatch } from '../shared/etag.js';
import { writeTransaction } from '../db/write-transaction.js';

/**
 * Locks the workspace's memberships (identity.lockMemberships) and answers the calling user's
 * role as it is now: the one the request began with may have been changed or taken away since.
 * A user no longer a member is refused as on their next request (403 7022).
 */
async function lockedActorRole(trx: Kysely<DB>, ctx: WorkspaceContext, workspaceId: string): Promise<Role | null> {
  await identity.lockMemberships(trx, workspaceId);
  if (ctx.principal.kind === 'api_token') return ctx.role;
  const role = await identity.roleOf(trx, workspaceId, ctx.principal.userId);
  if (!role) throw new ApiError('WORKSPACE_FORBIDDEN', { message: 'The caller is no longer a member of this workspace' });
  return role;
}

export function createWorkspaceService({ db, clock, cursors, events, config }: Pick<ServiceDeps, 'db' | 'clock' | 'cursors' | 'events' | 'config'>) {
  /** Only the workspace the call acts in is visible; any other id is simply not found. */
  async function visible(ctx: WorkspaceContext, rawId: string) {
    const row = await identity.workspace(db, pathWorkspace(ctx, rawId));
    if (!row) throw notFound('workspace');
    return { ...row, role: ctx.role };
  }

  return {
    async list(ctx: RequestContext) {
      const p = ctx.principal;
      const rows = p.kind === 'api_token' ? [{ ...(await identity.workspace(db, p.workspaceId))!, role: null }] : await identity.workspacesOf(db, p.userId);
      return { data: rows, has_more: false, next_cursor: null };
    },

    get: visible,

    /**
     * A new workspace; its creator (a user: a session or a JWT) is its owner. A user who owns
     * WSP_WORKSPACES_PER_USER workspaces already is refused (409 7065), counted under a lock on
     * the user in this transaction, so parallel creations never pass the limit.
     */
    async create(ctx: RequestContext, userId: string, name: string) {
      const now = nowSeconds(clock);
      const ws = { id: newId('ws'), name, etag: newEtag(), created_at: now, updated_at: now };
      const limit = config.quotas.workspacesPerUser;
      await writeTransaction(db, ctx, async (trx) => {
        const owned = await identity.lockedOwnedWorkspaceCount(trx, userId);
        if (owned >= limit) {
          throw new ApiError('WORKSPACE_LIMIT_REACHED', {
            message: `You own ${owned} workspaces, as many as one user may (${limit}); hand one over or leave one first`,
            metadata: { quota: 'workspaces_per_user', limit: String(limit), used: String(owned) },
          });
        }
        await identity.createWorkspace(trx, ws);
        await identity.setRole(trx, { workspace_id: ws.id, user_id: userId, role: 'owner', created_at: now });
        await events.record(trx, { ...sourceOf(ctx), workspaceId: ws.id }, 'workspace.created', ws.id, { name });
      });
      return { ...ws, role: 'owner' as const };
    },

    async members(ctx: WorkspaceContext, rawId: string, page: { limit: number; cursor: string | undefined }) {
      const { id } = await visible(ctx, rawId);
      return pageById(
        cursors,
        `members:${id}`,
        page,
        (after, take) => identity.members(db, id, take, after),
        (m) => ({ user_id: m.id, email: m.email, name: m.name, role: m.role, joined_at: m.joined_at }),
      );
    },

    /**
     * Changes a member's role (owner or admin). Only an owner grants the owner role or takes it
     * from someone; the last owner keeps it (409). The target's role and the caller's are read
     * under the workspace's lock, in the write's transaction: an admin's change judged on a role
     * read before an owner's concurrent promotion would demote that new owner, and its event
     * would name a `previous_role` that was no longer so.
     */
    async changeRole(ctx: WorkspaceContext, rawId: string, rawUserId: string, role: Role) {
      const { id } = await visible(ctx, rawId);
      const userId = canonicalId('usr', rawUserId);
      await writeTransaction(db, ctx, async (trx) => {
        const actor = await lockedActorRole(trx, ctx, id);
        requireRole({ ...ctx, role: actor }, ['owner', 'admin']);
        const current = await identity.roleOf(trx, id, userId);
        if (!current) throw notFound('member');
        if ((role === 'owner' || current === 'owner') && actor !== 'owner') throw new ApiError('OWNER_REQUIRED');
        const outcome = await identity.changeRole(trx, id, userId, role);
        if (outcome === 'not_member') throw notFound('member');
        if (outcome === 'last_owner') throw new ApiError('LAST_OWNER');
        await events.record(trx, ctx, 'member.updated', userId, { role, previous_role: current });
      });
      const m = (await identity.member(db, id, userId))!;
      return { user_id: m.id, email: m.email, name: m.name, role: m.role, joined_at: m.joined_at };
    },

    /**
     * Ends a membership: owners and admins remove others, anyone removes themselves; only an
     * owner removes an owner; the last owner stays (409). The user's next request in the
     * workspace is refused (memberships are read on every request, by every instance). Roles
     * are judged under the workspace's lock, as for a change of role.
     */
    async removeMember(ctx: WorkspaceContext, rawId: string, rawUserId: string) {
      const { id } = await visible(ctx, rawId);
      const userId = canonicalId('usr', rawUserId);
      const self = ctx.principal.kind !== 'api_token' && ctx.principal.userId === userId;
      if (!self) requireRole(ctx, ['owner', 'admin']);
      await writeTransaction(db, ctx, async (trx) => {
        const actor = await lockedActorRole(trx, ctx, id);
        if (!self) requireRole({ ...ctx, role: actor }, ['owner', 'admin']);
        const current = await identity.roleOf(trx, id, userId);
        if (!current) throw notFound('member');
        if (current === 'owner' && !self && actor !== 'owner') throw new ApiError('OWNER_REQUIRED');
        const outcome = await identity.removeMember(trx, id, userId);
        if (outcome === 'not_member') throw notFound('member');
        if (outcome === 'last_owner') throw new ApiError('LAST_OWNER');
        await events.record(trx, ctx, 'member.removed', userId, { role: current, self });
      });
    },

    async rename(ctx: WorkspaceContext, rawId: string, name: string, ifMatch: string) {
      const current = await visible(ctx, rawId);
      const etag = newEtag();
      const now = nowSeconds(clock);
      // The etag is compared inside the UPDATE itself: of concurrent writers exactly one wins.
      await writeTransaction(db, ctx, async (trx) => {
        if (!(await identity.renameWorkspace(trx, current.id, name, parseIfMatch(ifMatch), etag, now))) {
          const latest = await identity.workspace(trx, current.id);
          if (!latest) throw notFound('workspace');
          throw etagMismatch(latest.etag);
        }
        await events.record(trx, ctx, 'workspace.updated', current.id, { name, previous_name: current.name });
      });
      return { ...current, name, etag, updated_at: now };
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
