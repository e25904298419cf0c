import type { Role } from './principal.js';
import { ApiError } from '../shared/errors.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { bearerToken, classifyCredential, MAX_SUBJECT_LENGTH } from './credentials.js';
import type { JwtVerifier } from './jwt.js';
import type { Principal } from './principal.js';
import type { TokenScope } from './scopes.js';

/**
 * What authentication needs of the areas that keep credentials, handed over by the composition
 * root (src/service-deps.ts): the sessions, tokens and identity areas answer these from their stores.
 */
export interface CredentialLookups {
  /**
   * The live session with this token hash (its use recorded), or null. With `lists`, the same
   * statement reads the versions of the lists they name with the session's user id.
   */
  session(tokenHash: string, now: number, lists?: ListParts): Promise<{ userId: string; sessionId: string; csrfToken: string | null; expiresAt: number; listRead: readonly ListRead[] | null } | null>;
  /**
   * The live workspace API token with this hash (its use recorded), or null. With `lists`, the
   * same statement reads the versions of the lists they name with the token's workspace id.
   */
  apiToken(tokenHash: string, now: number, lists?: ListParts): Promise<{ tokenId: string; workspaceId: string; scopes: readonly TokenScope[] | null; listRead: readonly ListRead[] | null } | null>;
  /** The user a JWT subject names (a user id, or a subject linked to a user), or null. */
  userForSubject(subject: string): Promise<string | null>;
  /** The user's role in the workspace, or null when not a member. */
  roleOf: (workspaceId: string, userId: string) => Promise<Role | null>;
}

/** A list named by the credential's owner: `prefix` + the owner's id + `suffix`. */
export interface ListPart {
  prefix: string;
  suffix: string;
}

/** A prefix alone (the list `prefix` + the owner's id), or lists of parts. */
export type ListParts = string | readonly ListPart[];

/**
 * Lists whose versions the credential's own statement reads too, so that a conditional read of
 * the caller's own lists (src/http/list-cache.ts) makes one round trip, not two: each named by the
 * id of the credential's workspace (an API token's) or user (a session's).
 */
export interface ListAlongside {
  of: 'workspace' | 'user';
  lists: ListParts;
}

/**
 * A list's version as the credential's statement read it: not given when the credential's use was
 * written after the read (the write may bump the list it names, as a token's last use does).
 */
export interface ListRead {
  list: string;
  version: number;
}

/**
 * What a credential's statement read of its owner's list (`list_version` beside its row), to hand
 * on: nothing when no list was asked for, or when the request wrote the credential's use after
 * that read.
 */
export function listReadOf(lists: ListParts | undefined, ownerId: string, row: Readonly<Record<string, unknown>>, useWritten: boolean): readonly ListRead[] | null {
  if (lists === undefined || useWritten || !('list_version' in row)) return null;
  const parts: readonly ListPart[] = typeof lists === 'string' ? [{ prefix: lists, suffix: '' }] : lists;
  // The columns of src/db/credential-rows.ts: list_version, list_version_1, ...
  return parts.map((p, i) => ({ list: p.prefix + ownerId + p.suffix, version: Number(row[i === 0 ? 'list_version' : `list_version_${i}`] ?? 0) }));
}

export interface Authenticated {
  principal: Principal;
  /** The versions `alongside` asked for, when the credential's kind has that owner. */
  listRead: readonly ListRead[] | null;
}

/** The Authorization header, else the `wsp_session` cookie's value (docs/spec-gaps.md, "Accounts and sign-in": only where no header is sent). */
export type Authenticator = (authorization: string | undefined, sessionCookie?: string, alongside?: ListAlongside) => Promise<Authenticated>;

const unauthorized = (message?: string) => new ApiError('UNAUTHORIZED', message ? { message } : {});

/**
 * Turns an Authorization header (or a session cookie) into a principal with one indexed lookup by the token's
 * SHA-256 (or one signature check for a JWT). Every failure is the same 401, so nothing
 * tells a caller whether a token once existed.
 */
export function createAuthenticator(deps: { clock: Clock; verifyJwt: JwtVerifier; lookups: CredentialLookups }): Authenticator {
  const { clock, verifyJwt, lookups } = deps;
  return async (authorization, sessionCookie, alongside) => {
    const userList = alongside?.of === 'user' ? alongside.lists : undefined;
    if (authorization === undefined && sessionCookie !== undefined) {
      const shape = classifyCredential(sessionCookie);
      const s = shape.kind === 'session' ? await lookups.session(shape.hash, nowSeconds(clock), userList) : null;
      if (!s) throw unauthorized('The wsp_session cookie is not a live session: sign in again');
      return { principal: { kind: 'session', userId: s.userId, sessionId: s.sessionId, cookie: { csrfToken: s.csrfToken, expiresAt: s.expiresAt } }, listRead: s.listRead };
    }
    const token = bearerToken(authorization);
    if (!token) throw unauthorized(authorization ? 'The Authorization header must be "Bearer <credential>"' : 'The Authorization header is missing');
    const shape = classifyCredential(token);
    const now = nowSeconds(clock);
    switch (shape.kind) {
      case 'session': {
        const s = await lookups.session(shape.hash, now, userList);
        if (!s) throw unauthorized();
        return { principal: { kind: 'session', userId: s.userId, sessionId: s.sessionId }, listRead: s.listRead };
      }
      case 'api_token': {
        const t = await lookups.apiToken(shape.hash, now, alongside?.of === 'workspace' ? alongside.lists : undefined);
        if (!t) throw unauthorized();
        return { principal: { kind: 'api_token', tokenId: t.tokenId, workspaceId: t.workspaceId, scopes: t.scopes }, listRead: t.listRead };
      }
      case 'jwt': {
        const claims = await verifyJwt(shape.token);
        const sub = claims?.sub;
        // jose checks the signature and the registered claims it is asked to, not sub's type.
        if (typeof sub !== 'string' || sub === '' || sub.length > MAX_SUBJECT_LENGTH) throw unauthorized();
        const userId = await lookups.userForSubject(sub);
        if (!userId) throw unauthorized();
        return { principal: { kind: 'jwt', userId, subject: sub, expiresAt: claims!.exp! }, listRead: null };
      }
      default:
        throw unauthorized();
    }
  };
}
