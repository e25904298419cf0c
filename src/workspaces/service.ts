import type { ServiceDeps } from '../deps.js';
import type { RequestContext, WorkspaceContext } from '../auth/principal.js';
import { canonicalId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { notFound } from '../shared/errors.js';
import { etagMismatch, newEtag, parseIfMatch } from '../shared/etag.js';
import { workspaceStore } from './store.js';

export function createWorkspaceService({ db, clock }: Pick<ServiceDeps, 'db' | 'clock'>) {
  /** Only the workspace the call acts in is visible; any other id is simply not found. */
  async function visible(ctx: WorkspaceContext, rawId: string) {
    const id = canonicalId('ws', rawId);
    const row = id === ctx.workspaceId ? await workspaceStore.get(db, id) : undefined;
    if (!row) throw notFound('workspace');
    return { ...row, role: ctx.role };
  }

  return {
    async list(ctx: RequestContext) {
      const p = ctx.principal;
      const rows =
        p.kind === 'api_token'
          ? [{ ...(await workspaceStore.get(db, p.workspaceId))!, role: null }]
          : await workspaceStore.forUser(db, p.userId);
      return { data: rows, has_more: false, next_cursor: null };
    },

    get: visible,

    async rename(ctx: WorkspaceContext, rawId: string, name: string, ifMatch: string) {
      const current = await visible(ctx, rawId);
      const etag = newEtag();
      const now = nowSeconds(clock);
      // The etag is compared inside the UPDATE itself: of concurrent writers exactly one wins.
      if (!(await workspaceStore.rename(db, current.id, name, parseIfMatch(ifMatch), etag, now))) {
        const latest = await workspaceStore.get(db, current.id);
        if (!latest) throw notFound('workspace');
        throw etagMismatch(latest.etag);
      }
      return { ...current, name, etag, updated_at: now };
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
