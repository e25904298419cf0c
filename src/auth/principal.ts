import type { WriteClaim } from '../db/write-transaction.js';
import type { RequestOrigin } from '../events/record.js';
import type { TokenScope } from './scopes.js';

/**
 * A user's role in a workspace (the memberships of src/identity/tables.ts store it): what the
 * authorization of a workspace route checks, so the machinery names it here.
 */
export type Role = 'owner' | 'admin' | 'member' | 'viewer';

/** Who is calling, as proven by the bearer credential. */
export type Principal =
  | {
      kind: 'session';
      userId: string;
      sessionId: string;
      /** Sent as the `wsp_session` cookie rather than a bearer token: its writes need its CSRF token. */
      cookie?: { csrfToken: string | null; expiresAt: number };
    }
  | { kind: 'jwt'; userId: string; subject: string; /** The JWT's exp (Unix seconds): what it approves may not outlive it. */ expiresAt: number }
  | { kind: 'api_token'; tokenId: string; workspaceId: string; /** null: every scope (docs/spec-gaps.md, "Token scopes"). */ scopes: readonly TokenScope[] | null };

/** The one request context every service function receives. */
export interface RequestContext {
  principal: Principal;
  /** The workspace the call acts on; null for user-scoped calls. */
  workspaceId: string | null;
  /** The user's role in that workspace; null for a workspace API token or no workspace. */
  role: Role | null;
  /** The acting user's id, or the workspace API token's id when a token acts. */
  actorId: string;
  /** The request's id, address and user agent, recorded with its events (absent outside a request). */
  origin?: RequestOrigin;
  /**
   * The request's Idempotency-Key claim, when its write made one: the write's transaction marks
   * it (`writeTransaction`, src/db/write-transaction.ts), so that a write which committed is known
   * to have even when its answer is lost (src/http/idempotency.ts).
   */
  claim?: WriteClaim;
}

/** A context whose workspace is known: what workspace-scoped services take. */
export interface WorkspaceContext extends RequestContext {
  workspaceId: string;
}

export function actorIdOf(p: Principal): string {
  return p.kind === 'api_token' ? p.tokenId : p.userId;
}

export function userIdOf(p: Principal): string | null {
  return p.kind === 'api_token' ? null : p.userId;
}
