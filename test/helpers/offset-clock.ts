import fs from 'node:fs';
import type { Clock } from '../../src/shared/clock.js';

/** How often the offset file is read again at most (ms of real time). */
const REREAD_MS = 100;
const OFFSET = /^\s*(-?\d{1,12})\s*$/;

function readOffsetSeconds(file: string): number {
  const text = fs.readFileSync(file, 'utf8');
  const m = OFFSET.exec(text);
  if (!m) throw new Error(`the clock offset file ${file} must hold a whole number of seconds, got "${text.trim().slice(0, 40)}"`);
  return Number(m[1]);
}

/**
 * A clock moved by a number of seconds read from a file, for tests that run real server
 * processes (test/helpers/serve-moved-clock.ts gives it to the compute area): they move the
 * time of suspensions, expiry notices and the expiry scan by rewriting the file, in every
 * process at once, instead of waiting days. Production configuration has no such setting. It moves nothing else: credentials, sessions,
 * idempotency keys, rate limits and the job runner's leases and backoff keep the server's
 * own clock. The file is read at start (a missing or malformed one stops the start) and again
 * at most every 100 ms; a read that fails later keeps the last offset.
 */
export class OffsetClock implements Clock {
  private offsetMs: number;
  private readAtMs: number;

  constructor(
    readonly base: Clock,
    readonly file: string,
  ) {
    this.offsetMs = readOffsetSeconds(file) * 1000;
    this.readAtMs = Date.now();
  }

  nowMs(): number {
    const real = Date.now();
    if (real - this.readAtMs >= REREAD_MS) {
      this.readAtMs = real;
      try {
        this.offsetMs = readOffsetSeconds(this.file) * 1000;
      } catch {
        // a file being rewritten, or gone: the last offset holds
      }
    }
    return this.base.nowMs() + this.offsetMs;
  }
}
