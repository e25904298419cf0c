import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { ApiError } from '../shared/errors.js';
import { guessLimitStore } from './store.js';

/**
 * RFC 8628 §5.1: user-code guesses are rate limited. Wrong codes are counted per client IP
 * and per user in fixed windows; an attempt is counted before the lookup and given back
 * when the code was real, so that a burst of parallel guesses cannot overshoot the limit.
 */
export const GUESS_WINDOW_SECONDS = 900;
export const MAX_WRONG_CODES_PER_USER = 10;
/** Higher than per user: many people can share one address (an office behind NAT). */
export const MAX_WRONG_CODES_PER_IP = 30;

/**
 * Device logins started (unauthenticated writes) per client IP in the same window: a person's
 * CLI starts one per login, an office behind one address a few dozen.
 */
export const MAX_LOGINS_STARTED_PER_IP = 60;

const limitOf = (key: string) => (key.startsWith('user:') ? MAX_WRONG_CODES_PER_USER : MAX_WRONG_CODES_PER_IP);

export class GuessLimiter {
  constructor(private readonly db: Kysely<DB>) {}

  /** Counts one attempt under every key; 429 with Retry-After when any of them is over its limit. */
  async take(keys: string[], now: number): Promise<void> {
    let retryAfter = 0;
    for (const key of keys) {
      const { failures, window_start } = await guessLimitStore.take(this.db, key, now, GUESS_WINDOW_SECONDS);
      if (failures > limitOf(key)) retryAfter = Math.max(retryAfter, Number(window_start) + GUESS_WINDOW_SECONDS - now);
    }
    if (retryAfter > 0) {
      await this.giveBack(keys);
      throw new ApiError('USER_CODE_GUESSES_LIMITED', { headers: { 'retry-after': String(Math.max(1, retryAfter)) } });
    }
  }

  /** Counts one device login started from `clientIp`; answers 0 while within the limit, else the seconds to wait. */
  async takeStart(clientIp: string, now: number): Promise<number> {
    const { failures, window_start } = await guessLimitStore.take(this.db, `start:${clientIp}`, now, GUESS_WINDOW_SECONDS);
    return failures > MAX_LOGINS_STARTED_PER_IP ? Math.max(1, Number(window_start) + GUESS_WINDOW_SECONDS - now) : 0;
  }

  async giveBack(keys: string[]): Promise<void> {
    for (const key of keys) await guessLimitStore.giveBack(this.db, key);
  }
}
