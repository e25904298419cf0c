import type { Logger } from './shared/logger.js';

/** What is left of the grace period after the jobs in hand are released: for requests and the database to close. */
const RELEASE_RESERVE_SECONDS = 3;

/** When a shutdown stops waiting for the jobs in hand: 80 % of the grace period, leaving at least 3 s. */
export function releaseAfterMs(graceSeconds: number): number {
  return Math.max(0, graceSeconds - Math.max(graceSeconds * 0.2, RELEASE_RESERVE_SECONDS)) * 1000;
}

/**
 * On SIGTERM or SIGINT, once: says so, runs `finish` (let the work under way end, close the
 * database) and exits 0, or 1 if it fails or outlasts `graceSeconds`: a client that never
 * finishes its request, or a job that never ends, must not keep the process alive forever.
 * Shared by `wsp serve` (src/server.ts) and `wsp worker` (src/worker.ts).
 *
 * `releaseJobs` runs at `releaseAfterMs` if `finish` is not done by then: it gives the jobs still
 * in hand back to the queue (JobRunner.release), so that another instance runs them at once
 * rather than when their lease runs out, and the exit still comes within the grace period.
 */
export function exitOnSignal(log: Logger, graceSeconds: number, what: string, finish: () => Promise<void>, releaseJobs?: () => Promise<unknown>): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal, graceSeconds }, `shutting down: finishing ${what}`);
    const deadline = setTimeout(() => {
      log.error({ graceSeconds }, 'shutdown grace period over: exiting with work in flight');
      process.exit(1);
    }, graceSeconds * 1000);
    deadline.unref();
    const release = releaseJobs
      ? setTimeout(() => {
          releaseJobs().catch((err: unknown) => log.error({ err }, 'releasing the jobs in hand failed: their leases run out instead'));
        }, releaseAfterMs(graceSeconds))
      : null;
    release?.unref();
    try {
      await finish();
      if (release) clearTimeout(release);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
