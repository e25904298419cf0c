import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { hashToken, newSessionToken } from '../auth/credentials.js';
import { newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { sessionStore } from './store.js';

/** Idle expiry of a session: 30 days, extended on use. */
export const SESSION_IDLE_SECONDS = 30 * 24 * 3600;
/** Last-use writes are throttled to one a minute per credential. */
export const TOUCH_INTERVAL_SECONDS = 60;

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
