import type { Logger } from './shared/logger.js';

/**
 * On SIGTERM or SIGINT, once: says so, runs `finish` (let the work under way end, close the
 * database) and exits 0, or 1 if it fails or outlasts `graceSeconds`: a client that never
 * finishes its request, or a job that never ends, must not keep the process alive forever.
 * Shared by `wsp serve` (src/server.ts) and `wsp worker` (src/worker.ts).
 */
export function exitOnSignal(log: Logger, graceSeconds: number, what: string, finish: () => Promise<void>): void {
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
    try {
      await finish();
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
