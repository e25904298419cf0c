import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { hashToken, newSessionToken, TOUCH_INTERVAL_SECONDS } from '../auth/credentials.js';
import { newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { sessionStore } from './store.js';

/** Idle expiry of a session: 30 days, extended on use. */
export const SESSION_IDLE_SECONDS = 30 * 24 * 3600;

/** Creates a session for a user; the plaintext token is returned once and never stored. */
export async function createSession(db: Kysely<DB>, clock: Clock, userId: string): Promise<{ id: string; token: string }> {
  const token = newSessionToken();
  const now = nowSeconds(clock);
  const id = newId('ses');
  await sessionStore.insert(db, {
    id,
    user_id: userId,
    token_hash: hashToken(token),
    created_at: now,
    last_used_at: now,
    expires_at: now + SESSION_IDLE_SECONDS,
  });
  return { id, token };
}

/**
 * The live session a token's hash names, for the authenticator (every request with a session
 * token): null when there is none or it expired. Use extends it, written at most once a minute.
 */
export async function sessionForToken(db: Kysely<DB>, tokenHash: string, now: number): Promise<{ userId: string; sessionId: string } | null> {
  const s = await sessionStore.byHash(db, tokenHash);
  if (!s || s.expires_at <= now) return null;
  if (now - s.last_used_at >= TOUCH_INTERVAL_SECONDS) await sessionStore.touch(db, s.id, now, now + SESSION_IDLE_SECONDS);
  return { userId: s.user_id, sessionId: s.id };
}

/** Ends a session at once: its token is refused from the next request on. */
export async function endSession(db: Kysely<DB>, sessionId: string): Promise<void> {
  await sessionStore.delete(db, sessionId);
}
