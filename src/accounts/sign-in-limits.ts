import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { countAttempt } from '../db/window-counter.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { ApiError } from '../shared/errors.js';
import { signInLimitStore } from './store.js';

/** Fixed windows of 15 minutes, counted in the database: every server instance shares them. */
export const SIGN_IN_WINDOW_SECONDS = 900;
/** Per client address, over every account: higher, an office shares one address behind NAT. */
export const MAX_FAILED_SIGN_INS_PER_IP = 30;
/** Per client address and account: a person mistypes a few times; a guesser there is stopped after ten. */
export const MAX_FAILED_SIGN_INS_PER_IP_ACCOUNT = 10;
/**
 * Failures on one account from every address in a window from which it counts as under attack
 * (guesses spread over many addresses)...
 */
export const ACCOUNT_UNDER_ATTACK_FAILURES = 30;
/**
 * ...and then each address has this many failures on it instead of ten. The account itself is
 * never closed: its owner's right password from an address that has not failed on it is checked
 * and accepted, as the big identity providers do (rate-limit guesses, not the owner).
 */
export const MAX_FAILED_SIGN_INS_PER_IP_ACCOUNT_UNDER_ATTACK = 3;
/** A place not renewed for this long belongs to a process that died mid-check (a check takes well under a second). */
const STALE_PLACE_SECONDS = 60;
/** The longest a sign-in waits for a place taken by checks under way; then 429 (7067). */
const WAIT_FOR_PLACE_MS = 20_000;
/** Checks finishing in another process wake nobody here: a waiter looks again this often. */
const LOOK_AGAIN_MS = 250;
/** Sign-ins of one key waiting in one process at most; more are refused at once (7067). */
const MAX_WAITING_PER_KEY = 100;

/** One password check that holds its places; `end` gives them back, counting a failure. */
export interface SignInAttempt {
  end(outcome: 'succeeded' | 'failed' | 'abandoned'): Promise<void>;
}

/**
 * Failed sign-ins, limited per client address (30), per address and account (10; 3 while the
 * account is under attack, 30 failures from all addresses) in fixed windows of 15 minutes. An
 * account-wide limit never refuses by itself, so nobody locks an owner out from elsewhere.
 *
 * A failure counts once the password has been checked and found wrong; a right one counts
 * nothing, however many are checked at once. So that parallel guesses still get no more checks
 * than the limit, each check first takes a place: the failures so far plus the checks under way
 * may not pass the limit. An attempt that finds no place because of failures is refused (429
 * 7045, Retry-After: the window's end); one that finds none only because checks are under way
 * waits for one of them to end (woken at once by checks of this process, looking again every
 * 250 ms for others'), up to 20 s.
 */
export function createSignInLimits(db: Kysely<DB>, clock: Clock) {
  const waiting = new Map<string, Set<() => void>>();
  const wake = (key: string) => {
    for (const w of waiting.get(key) ?? []) w();
  };

  type Place = 'taken' | 'busy' | { retryAfter: number };

  async function take(key: string, limit: number): Promise<Place> {
    const now = nowSeconds(clock);
    await signInLimitStore.open(db, key, now, SIGN_IN_WINDOW_SECONDS, now - STALE_PLACE_SECONDS);
    if (await signInLimitStore.take(db, key, limit, now)) return 'taken';
    const row = await signInLimitStore.get(db, key);
    if (row && Number(row.failures) >= limit) return { retryAfter: Math.max(1, Number(row.window_start) + SIGN_IN_WINDOW_SECONDS - now) };
    return 'busy';
  }

  async function giveBack(key: string, failed: boolean): Promise<void> {
    await signInLimitStore.finish(db, key, failed, nowSeconds(clock), SIGN_IN_WINDOW_SECONDS);
    wake(key);
  }

  /** Resolves when a check of one of `keys` ends in this process, or after LOOK_AGAIN_MS. */
  function placeFreed(keys: string[], maxMs: number): Promise<void> {
    for (const key of keys) {
      if ((waiting.get(key)?.size ?? 0) >= MAX_WAITING_PER_KEY) throw busy();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const key of keys) {
          const set = waiting.get(key)!;
          set.delete(done);
          if (set.size === 0) waiting.delete(key);
        }
        resolve();
      };
      const timer = setTimeout(done, Math.min(LOOK_AGAIN_MS, maxMs));
      for (const key of keys) {
        let set = waiting.get(key);
        if (!set) waiting.set(key, (set = new Set()));
        set.add(done);
      }
    });
  }

  return {
    /** Takes the places of one password check of `emailKey` from `ip`, or refuses (429). */
    async begin(ip: string, emailKey: string): Promise<SignInAttempt> {
      const keys = { ip: `ip:${ip}`, pair: `ip-account:${ip} ${emailKey}`, account: `account:${emailKey}` };
      const now = nowSeconds(clock);
      const account = await signInLimitStore.get(db, keys.account);
      const underAttack = account !== undefined && Number(account.window_start) > now - SIGN_IN_WINDOW_SECONDS && Number(account.failures) >= ACCOUNT_UNDER_ATTACK_FAILURES;
      const pairLimit = underAttack ? MAX_FAILED_SIGN_INS_PER_IP_ACCOUNT_UNDER_ATTACK : MAX_FAILED_SIGN_INS_PER_IP_ACCOUNT;
      const started = performance.now();
      for (;;) {
        const byIp = await take(keys.ip, MAX_FAILED_SIGN_INS_PER_IP);
        if (byIp === 'taken') {
          const byPair = await take(keys.pair, pairLimit);
          if (byPair === 'taken') return attempt(keys);
          await giveBack(keys.ip, false);
          if (byPair !== 'busy') throw limited(byPair.retryAfter);
        } else if (byIp !== 'busy') {
          throw limited(byIp.retryAfter);
        }
        const left = WAIT_FOR_PLACE_MS - (performance.now() - started);
        if (left <= 0) throw busy();
        await placeFreed([keys.ip, keys.pair], left);
      }
    },
  };

  function attempt(keys: { ip: string; pair: string; account: string }): SignInAttempt {
    let ended = false;
    return {
      async end(outcome) {
        if (ended) return;
        ended = true;
        const failed = outcome === 'failed';
        await giveBack(keys.pair, failed);
        await giveBack(keys.ip, failed);
        if (failed) await countAttempt(db, 'sign_in_limits', keys.account, nowSeconds(clock), SIGN_IN_WINDOW_SECONDS);
      },
    };
  }
}

export type SignInLimits = ReturnType<typeof createSignInLimits>;

function limited(retryAfter: number): ApiError {
  const wait = String(Math.max(1, retryAfter));
  return new ApiError('SIGN_IN_LIMITED', { headers: { 'retry-after': wait }, metadata: { retry_after: wait } });
}

function busy(): ApiError {
  return new ApiError('SIGN_IN_BUSY', { headers: { 'retry-after': '1' }, metadata: { retry_after: '1' } });
}
