import type { ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { idFloor, timeOfId } from '../shared/ids.js';
import { toNotification } from './representation.js';

export interface StreamTiming {
  /** How often each stream looks for new notifications in the database (every instance's show up). */
  pollMs: number;
  /** CONTRACT §11: a comment line this often, so proxies and clients keep the connection. */
  keepAliveMs: number;
  /**
   * Ids are made from each instance's clock when the row is written, and rows commit in
   * another order than their ids: a stream looks back this far behind the newest id it sent,
   * and skips what it sent already, so a notice committed late is still sent once.
   */
  lookbackMs: number;
}

export const STREAM_TIMING: StreamTiming = { pollMs: 1000, keepAliveMs: 15_000, lookbackMs: 30_000 };

/**
 * The open notification streams of this process (`GET /v1/notifications/stream`). Each reads the
 * database, not this process's memory, so a notification made by any instance (a job's expiry
 * notice, another server's request) reaches every stream of its user, and nothing is lost while
 * the database connection comes and goes: the next poll finds it.
 */
export class NotificationStreams {
  private readonly open = new Set<() => void>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly timing: StreamTiming = STREAM_TIMING,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Serves one stream until the client leaves or the server closes it. `lastEventId`: resume after that notification. */
  serve(userId: string, lastEventId: string | null, res: ServerResponse, extraHeaders: Record<string, string> = {}): Promise<void> {
    res.writeHead(200, {
      ...extraHeaders,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      // nginx and similar proxies otherwise hold events back in their buffers.
      'x-accel-buffering': 'no',
    });
    res.write(`retry: 3000\n: connected\n\n`);
    const sent = new Set<string>();
    let newest = lastEventId ? timeOfId(lastEventId) : Date.now();
    let resumeAfter = lastEventId;
    // A new stream (no Last-Event-ID) sends what comes from now on: its first look only notes
    // what was made before it connected, in the look-back window.
    let primed = lastEventId !== null;
    const connectedFloor = idFloor('ntf', Date.now());
    let polling = false;
    let closed = false;

    const poll = async () => {
      if (polling || closed) return;
      polling = true;
      try {
        // Resuming: everything after the client's last event; then a window behind the newest sent.
        const floor = resumeAfter ?? idFloor('ntf', newest - this.timing.lookbackMs);
        const rows = await this.db.selectFrom('notifications').selectAll().where('user_id', '=', userId).where('id', '>', floor).orderBy('id', 'asc').limit(500).execute();
        resumeAfter = null;
        if (!primed) {
          for (const row of rows) if (row.id < connectedFloor) sent.add(row.id);
          primed = true;
        }
        for (const row of rows) {
          if (sent.has(row.id) || closed) continue;
          sent.add(row.id);
          newest = Math.max(newest, timeOfId(row.id));
          res.write(`id: ${row.id}\nevent: notification\ndata: ${JSON.stringify(toNotification(row))}\n\n`);
        }
        const keepFrom = idFloor('ntf', newest - this.timing.lookbackMs);
        for (const id of sent) if (id < keepFrom) sent.delete(id);
      } catch {
        // The database is away: the next poll tries again; nothing is marked sent meanwhile.
      } finally {
        polling = false;
      }
    };

    return new Promise<void>((resolve) => {
      const pollTimer = setInterval(() => void poll(), this.timing.pollMs);
      const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), this.timing.keepAliveMs);
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(pollTimer);
        clearInterval(keepAlive);
        this.open.delete(close);
        if (!res.writableEnded) res.end();
        resolve();
      };
      this.open.add(close);
      res.on('close', close);
      void poll();
    });
  }

  /** Ends every stream (the server is shutting down): clients reconnect to another instance with Last-Event-ID. */
  closeAll(): void {
    for (const close of [...this.open]) close();
  }
}
