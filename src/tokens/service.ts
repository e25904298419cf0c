import type { EventLog } from '../events/record.js';
import { enforceQuota } from '../quotas/enforce.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { hashToken, newApiToken, TOUCH_INTERVAL_SECONDS } from '../auth/credentials.js';
import { listReadOf, type ListParts, type ListRead } from '../auth/authenticator.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { notFound } from '../shared/errors.js';
import type { Quotas } from '../quotas/limits.js';
import { pageByIdAsJson, type CursorCodec } from '../shared/cursor.js';
import { TOKEN_LIST_PREFIX, tokenListName, tokenStore } from './store.js';
import type { CreateTokenBody, ListedToken } from './schemas.js';
import { parseStoredScopes, storedScopes, type TokenScope } from '../auth/scopes.js';
import { writeTransaction } from '../db/write-transaction.js';

/** The list_versions name of this list (src/http/list-cache.ts). */
export { TOKEN_LIST_PREFIX, tokenListName };

export interface TokenServiceDeps {
  db: Kysely<DB>;
  clock: Clock;
  cursors: CursorCodec;
  config: { quotas: Pick<Quotas, 'apiTokens'> };
  events: EventLog;
}

export interface IssuedToken {
  id: string;
  name: string;
  /** The plaintext: shown once, stored only as its SHA-256. */
  token: string;
  expires_at: number | null;
}

/**
 * Makes and stores a workspace API token (the API's POST /v1/api_tokens and `wsp admin
 * bootstrap` alike): `prefix` is its first 12 characters; `created_by` the acting user or token.
 */
export async function issueApiToken(
  db: Kysely<DB>,
  opts: { workspaceId: string; name: string; createdBy: string; expiresAt: number | null; now: number; scopes?: readonly TokenScope[] },
  event?: { log: EventLog; ctx: WorkspaceContext },
  /** The workspace's quota of live tokens (WSP_QUOTA_API_TOKENS), counted under the workspace's lock in the transaction that adds. */
  quota?: number,
): Promise<IssuedToken> {
  const token = newApiToken();
  const id = newId('tok');
  const row = {
    id,
    workspace_id: opts.workspaceId,
    name: opts.name,
    prefix: token.slice(0, 12),
    token_hash: hashToken(token),
    expires_at: opts.expiresAt,
    created_at: opts.now,
    created_by: opts.createdBy,
    last_used_at: null,
    scopes: storedScopes(opts.scopes),
  };
  // Made for a request (with its event), the request's Idempotency-Key claim is marked with it.
  await writeTransaction(db, event?.ctx ?? {}, async (trx) => {
    if (quota !== undefined) {
      await enforceQuota(trx, opts.workspaceId, {
        quota: 'api_tokens',
        limit: quota,
        error: 'TOKEN_QUOTA_EXCEEDED',
        count: async () => ({ count: await tokenStore.countLive(trx, opts.workspaceId, opts.now) }),
        message: (held) => `The workspace holds ${held.count} API tokens; its quota is ${quota}: revoke one before creating another`,
      });
    }
    await tokenStore.insert(trx, row);
    // Never the token: its name, expiry and scopes.
    if (event) await event.log.record(trx, event.ctx, 'api_token.created', id, { name: opts.name, expires_at: opts.expiresAt, scopes: parseStoredScopes(row.scopes) });
  });
  return { id, name: opts.name, token, expires_at: opts.expiresAt };
}

/**
 * The live workspace API token a token's hash names, for the authenticator (every request with
 * an API token): null when there is none or it expired. Its last use is written at most once a minute.
 */
export async function apiTokenForHash(
  db: Kysely<DB>,
  tokenHash: string,
  now: number,
  lists?: ListParts,
): Promise<{ tokenId: string; workspaceId: string; scopes: TokenScope[] | null; listRead: readonly ListRead[] | null } | null> {
  const t = lists === undefined ? await tokenStore.byHash(db, tokenHash) : await tokenStore.byHashWithList(db, tokenHash, lists);
  if (!t || (t.expires_at !== null && t.expires_at <= now)) return null;
  const touched = t.last_used_at === null || now - t.last_used_at >= TOUCH_INTERVAL_SECONDS;
  if (touched) await tokenStore.touch(db, t.id, now);
  // The token's list shows its last use: a version read before that write is the list's past.
  const listRead = listReadOf(lists, t.workspace_id, t, touched);
  // One literal (docs/decisions.md, hidden classes): `{ ...found, listRead }` made a new one on every read.
  return { tokenId: t.id, workspaceId: t.workspace_id, scopes: parseStoredScopes(t.scopes), listRead };
}

/** API tokens the workspace holds that still work, for its quota figures. */
export const liveTokenCount = (db: Kysely<DB>, workspaceId: string, now: number) => tokenStore.countLive(db, workspaceId, now);

export function createTokenService({ db, clock, cursors, config, events }: TokenServiceDeps) {
  return {
    /**
     * `expires_at` is already known to be in the future (the route's `validate`, before 403).
     * The workspace's quota (WSP_QUOTA_API_TOKENS) is counted in the transaction that adds, under
     * the workspace's lock: requests at the same instant never pass it.
     */
    async create(ctx: WorkspaceContext, body: CreateTokenBody): Promise<IssuedToken> {
      return issueApiToken(
        db,
        {
          workspaceId: ctx.workspaceId,
          name: body.name,
          createdBy: ctx.actorId,
          expiresAt: body.expires_at ?? null,
          now: nowSeconds(clock),
          ...(body.scopes !== undefined ? { scopes: body.scopes } : {}),
        },
        { log: events, ctx },
        config.quotas.apiTokens,
      );
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      return pageByIdAsJson<ListedToken>(cursors, `api_tokens:${ctx.workspaceId}`, { limit, cursor }, tokenListName(ctx.workspaceId), (after, take) =>
        tokenStore.page(db, ctx.workspaceId, take, after),
      );
    },

    async revoke(ctx: WorkspaceContext, rawId: string) {
      const id = canonicalId('tok', rawId);
      await writeTransaction(db, ctx, async (trx) => {
        if (!(await tokenStore.delete(trx, ctx.workspaceId, id))) throw notFound('API token');
        await events.record(trx, ctx, 'api_token.revoked', id);
      });
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
