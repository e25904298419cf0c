import { ApiError } from '../shared/errors.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { countAttempt, purgeWindows } from '../db/window-counter.js';
import type { Principal } from '../auth/principal.js';

export const RATE_WINDOW_SECONDS = 60;

/**
 * Fixed one-minute windows per key, in this process's memory, timed by the injected clock.
 * Several server instances each count on their own (the limits are per process).
 */
export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private nextSweep = 0;

  constructor(
    private readonly clock: Clock,
    readonly limit: number,
    readonly windowSeconds: number = RATE_WINDOW_SECONDS,
    private readonly maxKeys: number = 100_000,
  ) {}

  /** Counts one event for `key`; answers 0 while within the limit, else the seconds until the window ends. */
  hit(key: string): number {
    const now = nowSeconds(this.clock);
    this.sweep(now);
    let w = this.windows.get(key);
    if (!w || now >= w.start + this.windowSeconds) {
      this.windows.delete(key);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count++;
    return w.count > this.limit ? Math.max(1, w.start + this.windowSeconds - now) : 0;
  }

  /** Forgets ended windows once a window, and the oldest keys when there are too many. */
  private sweep(now: number): void {
    if (now >= this.nextSweep) {
      this.nextSweep = now + this.windowSeconds;
      for (const [k, w] of this.windows) if (now >= w.start + this.windowSeconds) this.windows.delete(k);
    }
    if (this.windows.size < this.maxKeys) return;
    for (const k of this.windows.keys()) {
      this.windows.delete(k);
      if (this.windows.size < this.maxKeys / 2) break;
    }
  }
}

/** Where a shared window stands after a request counted in it. */
export interface WindowState {
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
  over: boolean;
}

/**
 * The general rate limit (docs/spec-gaps.md, "Token scopes", WSP_RATE_LIMIT_PER_MINUTE): fixed one-minute windows per
 * key counted in the database (one upsert per request and key), so every server instance
 * shares each credential's and each workspace's budget.
 */
export class SharedRateLimit {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    readonly limit: number,
  ) {}

  async hit(key: string): Promise<WindowState> {
    const now = nowSeconds(this.clock);
    const { failures, window_start } = await countAttempt(this.db, 'request_limits', key, now, RATE_WINDOW_SECONDS);
    return { remaining: Math.max(0, this.limit - failures), resetSeconds: Math.max(1, window_start + RATE_WINDOW_SECONDS - now), over: failures > this.limit };
  }
}

/** Windows over: the maintenance job forgets them. */
export const purgeRequestWindows = (db: Kysely<DB>, now: number) => purgeWindows(db, 'request_limits', now - RATE_WINDOW_SECONDS);

export function rateLimited(retryAfterSeconds: number, message?: string): ApiError {
  return new ApiError('RATE_LIMITED', {
    ...(message ? { message } : {}),
    metadata: { retry_after: String(retryAfterSeconds) },
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

/**
 * The key the general rate limit counts under: one person's budget for every session and JWT of
 * theirs (sessions are cheap to mint: a device login each), a workspace API token's own.
 */
export function credentialKey(p: Principal): string {
  return p.kind === 'api_token' ? `tok:${p.tokenId}` : `user:${p.userId}`;
}
