import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { ApiError } from '../shared/errors.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { bearerToken, classifyCredential, MAX_SUBJECT_LENGTH } from './credentials.js';
import type { JwtVerifier } from './jwt.js';
import type { Principal } from './principal.js';
import { sessionStore } from '../sessions/store.js';
import { SESSION_IDLE_SECONDS, TOUCH_INTERVAL_SECONDS } from '../sessions/service.js';
import { tokenStore } from '../tokens/store.js';
import { identityStore } from '../identity/store.js';

export type Authenticator = (authorization: string | undefined) => Promise<Principal>;

const unauthorized = (message?: string) => new ApiError('UNAUTHORIZED', message ? { message } : {});

/**
 * Turns an Authorization header into a principal with one indexed lookup by the token's
 * SHA-256 (or one signature check for a JWT). Every failure is the same 401, so nothing
 * tells a caller whether a token once existed.
 */
export function createAuthenticator(deps: { db: Kysely<DB>; clock: Clock; verifyJwt: JwtVerifier }): Authenticator {
  const { db, clock, verifyJwt } = deps;
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (!token) throw unauthorized(authorization ? 'The Authorization header must be "Bearer <credential>"' : 'The Authorization header is missing');
    const shape = classifyCredential(token);
    const now = nowSeconds(clock);
    switch (shape.kind) {
      case 'session': {
        const s = await sessionStore.byHash(db, shape.hash);
        if (!s || s.expires_at <= now) throw unauthorized();
        if (now - s.last_used_at >= TOUCH_INTERVAL_SECONDS) await sessionStore.touch(db, s.id, now, now + SESSION_IDLE_SECONDS);
        return { kind: 'session', userId: s.user_id, sessionId: s.id };
      }
      case 'api_token': {
        const t = await tokenStore.byHash(db, shape.hash);
        if (!t || (t.expires_at !== null && t.expires_at <= now)) throw unauthorized();
        if (t.last_used_at === null || now - t.last_used_at >= TOUCH_INTERVAL_SECONDS) await tokenStore.touch(db, t.id, now);
        return { kind: 'api_token', tokenId: t.id, workspaceId: t.workspace_id };
      }
      case 'jwt': {
        const claims = await verifyJwt(shape.token);
        const sub = claims?.sub;
        // jose checks the signature and the registered claims it is asked to, not sub's type.
        if (typeof sub !== 'string' || sub === '' || sub.length > MAX_SUBJECT_LENGTH) throw unauthorized();
        let userId: string | null = null;
        if (sub.startsWith('usr_')) userId = (await identityStore.getUser(db, sub))?.id ?? null;
        userId ??= await identityStore.userIdForSubject(db, sub);
        if (!userId) throw unauthorized();
        return { kind: 'jwt', userId, subject: sub };
      }
      default:
        throw unauthorized();
    }
  };
}
