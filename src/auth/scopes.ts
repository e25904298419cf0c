/**
 * Token scopes (docs/spec-gaps.md, "Token scopes"): what a workspace API token may do. A token made without
 * `scopes` holds every one; `:write` implies `:read` of its area; `secrets:access` (reading
 * payloads) is never implied. Sessions and JWTs act for a user and have no scopes: their role
 * decides.
 */
import { TOKEN_SCOPES, type TokenScope } from './scope-schemas.js';

export { TOKEN_SCOPES, type TokenScope };

/** Whether a token's scopes (null: all) allow what a route needs. */
export function grants(granted: readonly string[] | null, required: TokenScope): boolean {
  if (granted === null || granted.includes(required)) return true;
  return required.endsWith(':read') && granted.includes(`${required.slice(0, -':read'.length)}:write`);
}

/**
 * Why a route that a workspace API token can reach needs no token scope (`tokenScope: null`),
 * declared with the route: `refused`, a token is turned away anyway (the route needs a user's
 * role, or a user); `open`, any token of the workspace may call it, whatever its scopes, and
 * `why` says why that is harmless.
 */
export interface NoTokenScope {
  tokens: 'refused' | 'open';
  why: string;
}

/** Stored form: sorted, space-separated; null for all. */
export const storedScopes = (scopes: readonly TokenScope[] | undefined): string | null => (scopes === undefined ? null : [...new Set(scopes)].sort().join(' '));

export const parseStoredScopes = (stored: string | null): TokenScope[] | null => (stored === null ? null : (stored.split(' ').filter((s) => s !== '') as TokenScope[]));
