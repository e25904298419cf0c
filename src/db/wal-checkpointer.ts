import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/**
 * A server's SQLite checkpoints, on a thread of their own.
 *
 * In WAL mode SQLite copies the log back into the database file (a checkpoint) on the commit
 * that takes the log past 1,000 pages: on that request's thread, the event loop, with the two
 * fsyncs it makes. That took 8-10 ms of a busy server's loop every fraction of a second, and
 * tens of milliseconds when the disk was slow: with the checkpoints off the loop, the p99 of
 * writers fell by a tenth to a fifth, alone and during a restore storm (docs/benchmarks.md,
 * round nine).
 *
 * A thread with its own connection runs a PASSIVE checkpoint every `intervalMs`, which copies
 * what no reader still needs and never blocks the writer or the readers; one with nothing to
 * copy returns at once without a sync. The writer keeps an automatic checkpoint of its own at
 * `BACKSTOP_PAGES`, in case the thread falls behind or stops. Nothing about durability changes:
 * a commit is durable as before (synchronous = NORMAL in WAL mode), the checkpoint only moves
 * pages from one file to the other.
 */
export interface WalCheckpointer {
  /** Ends the thread after one last checkpoint; resolves once it has closed its connection. */
  stop(): Promise<void>;
}

/** 16 MB of log; the thread keeps it at a few hundred kilobytes under load. */
export const BACKSTOP_PAGES = 4000;
export const CHECKPOINT_INTERVAL_MS = 100;
/**
 * The thread starts this long after the writer opens, once a server is serving. Starting a thread
 * (a Node environment of its own, its built-in modules compiled without Node's code cache under
 * the heap flags of bin/wsp.js) took 90 ms beside the server's own start, on two cores.
 * Until then the writer's backstop checkpoints, as it does whenever the thread falls behind.
 */
export const THREAD_START_MS = 1000;

// A script rather than a module file: the bundle (scripts/bundle.mjs) carries it as it is, and
// the thread needs nothing but the SQLite binding, whose path the main thread resolves.
const THREAD = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.binding);
const db = new Database(workerData.file);
const checkpoint = () => db.pragma('wal_checkpoint(PASSIVE)');
// Told once, not ten times a second (a full disk fails every checkpoint until space is freed).
let failing = '';
const timer = setInterval(() => {
  try {
    checkpoint();
    failing = '';
  } catch (err) {
    const error = String(err && err.message || err);
    if (error !== failing) parentPort.postMessage({ error });
    failing = error;
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  try { checkpoint(); } finally { db.close(); parentPort.close(); }
});
`;

export function startWalCheckpointer(file: string, writer: SqliteDatabase.Database, intervalMs = CHECKPOINT_INTERVAL_MS, startInMs = THREAD_START_MS): WalCheckpointer {
  writer.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  let thread: Worker | null = null;
  let exited = Promise.resolve();
  const start = () => {
    const binding = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(THREAD, { eval: true, workerData: { file, binding, intervalMs } });
    // Rare (a full disk, an I/O error): the writer's own checkpoints take over past the backstop,
    // and the operator hears of it once per new error.
    const warn = (message: string) => process.emitWarning(`SQLite's checkpoint thread: ${message}`, { code: 'WSP_WAL_CHECKPOINT' });
    worker.on('message', (m: { error?: string }) => m.error && warn(m.error));
    worker.on('error', (err) => warn(err.message));
    // The thread's timer must not keep a process alive that has nothing else to do.
    worker.unref();
    exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    thread = worker;
  };
  const starting = startInMs > 0 ? setTimeout(start, startInMs).unref() : (start(), null);
  let stopping: Promise<void> | null = null;
  return {
    stop() {
      if (!stopping) {
        if (starting) clearTimeout(starting);
        if (thread) {
          // Waited for: the process stays up until the thread has closed its connection.
          thread.ref();
          thread.postMessage('stop');
        }
        stopping = exited;
      }
      return stopping;
    },
  };
}
