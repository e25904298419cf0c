import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** Gives up after this long (default 60 s: generous for a loaded 2-core machine). */
  timeoutMs?: number;
  /** Between probes (default 100 ms); 0 yields with setImmediate only (for in-process work that needs no timer). */
  intervalMs?: number;
  /** More to say when it times out: the state last seen, a server's output. */
  detail?: () => string | Promise<string>;
}

/**
 * Polls `probe` until it returns something truthy, and returns that: instead of sleeping and
 * hoping the effect has happened by then. Times out with an error that names what was awaited
 * (`what`, completing "timed out waiting for ..."), and `detail()` if given.
 */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const intervalMs = opts.intervalMs ?? 100;
  const started = Date.now();
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() - started > timeoutMs) {
      const more = opts.detail ? `\n${await opts.detail()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${more}`);
    }
    if (intervalMs > 0) await sleep(intervalMs);
    else await new Promise((resolve) => setImmediate(resolve));
  }
}
