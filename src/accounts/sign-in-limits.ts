import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { countAttempt, giveBackAttempt } from '../db/window-counter.js';
import { ApiError } from '../shared/errors.js';

/** Fixed windows of 15 minutes, counted in the database: every server instance shares them. */
export const SIGN_IN_WINDOW_SECONDS = 900;
/** Per account: a person mistypes a few times; a guesser is stopped after ten. */
export const MAX_FAILED_SIGN_INS_PER_ACCOUNT = 10;
/** Per client address: higher, an office shares one behind NAT. */
export const MAX_FAILED_SIGN_INS_PER_IP = 30;

const limitOf = (key: string) => (key.startsWith('account:') ? MAX_FAILED_SIGN_INS_PER_ACCOUNT : MAX_FAILED_SIGN_INS_PER_IP);

/**
 * Failed sign-ins per client address and per account (the email, whether or not a user has it,
 * so the limit tells nothing either). An attempt is counted before the password is checked and
 * given back when it was right, so parallel guesses cannot slip past the limit.
 */
export async function countSignIn(db: Kysely<DB>, keys: string[], now: number): Promise<void> {
  let retryAfter = 0;
  for (const key of keys) {
    const { failures, window_start } = await countAttempt(db, 'sign_in_limits', key, now, SIGN_IN_WINDOW_SECONDS);
    if (failures > limitOf(key)) retryAfter = Math.max(retryAfter, window_start + SIGN_IN_WINDOW_SECONDS - now);
  }
  if (retryAfter > 0) {
    await forgiveSignIn(db, keys);
    const wait = String(Math.max(1, retryAfter));
    throw new ApiError('SIGN_IN_LIMITED', { headers: { 'retry-after': wait }, metadata: { retry_after: wait } });
  }
}

export async function forgiveSignIn(db: Kysely<DB>, keys: string[]): Promise<void> {
  for (const key of keys) await giveBackAttempt(db, 'sign_in_limits', key);
}
