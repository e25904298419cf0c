import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { hashToken, newApiToken } from '../auth/credentials.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { notFound, validationError } from '../shared/errors.js';
import { toPage, type CursorCodec } from '../http/cursor.js';
import { tokenStore } from './store.js';
import type { CreateTokenBody } from './schemas.js';

export interface TokenServiceDeps {
  db: Kysely<DB>;
  clock: Clock;
  cursors: CursorCodec;
}

export function createTokenService({ db, clock, cursors }: TokenServiceDeps) {
  return {
    async create(ctx: WorkspaceContext, body: CreateTokenBody) {
      const now = nowSeconds(clock);
      const expiresAt = body.expires_at ?? null;
      if (expiresAt !== null && expiresAt <= now) throw validationError(['body', 'expires_at'], 'expires_at must be in the future (Unix seconds)');
      const token = newApiToken();
      const id = newId('tok');
      await tokenStore.insert(db, {
        id,
        workspace_id: ctx.workspaceId,
        name: body.name,
        prefix: token.slice(0, 12),
        token_hash: hashToken(token),
        expires_at: expiresAt,
        created_at: now,
        created_by: ctx.actorId,
        last_used_at: null,
      });
      return { id, name: body.name, token, expires_at: expiresAt };
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      const list = `api_tokens:${ctx.workspaceId}`;
      const before = cursor ? String(cursors.decode(list, cursor)[0]) : null;
      const rows = await tokenStore.page(db, ctx.workspaceId, limit + 1, before);
      return toPage(rows, limit, (r) => r, (r) => [r.id], cursors, list);
    },

    async revoke(ctx: WorkspaceContext, rawId: string) {
      const deleted = await tokenStore.delete(db, ctx.workspaceId, canonicalId('tok', rawId));
      if (!deleted) throw notFound('API token');
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
