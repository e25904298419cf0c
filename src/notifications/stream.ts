import type { ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { NotificationsTable } from './tables.js';
import { idFloor, timeOfId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { ApiError } from '../shared/errors.js';
import { toNotification } from './representation.js';
import { notificationStore } from './store.js';

export interface StreamTiming {
  /** How often the process's one poller looks in the database for every stream (every instance's notifications and credential changes show up). */
  pollMs: number;
  /** docs/spec-gaps.md, "Live notifications": a comment line this often, so proxies and clients keep the connection. */
  keepAliveMs: number;
  /**
   * Ids are made from each instance's clock when the row is written, and rows commit in
   * another order than their ids: a stream looks back this far behind the newest id it sent,
   * and skips what it sent already, so a notice committed late is still sent once.
   */
  lookbackMs: number;
}

export const STREAM_TIMING: StreamTiming = { pollMs: 1000, keepAliveMs: 15_000, lookbackMs: 30_000 };

/** WSP_STREAMS_PER_USER and WSP_STREAMS_PER_PROCESS: how many streams one process holds open. */
export interface StreamLimits {
  /** One user's open streams on this process. */
  perUser: number;
  /** All users' open streams on this process. */
  perProcess: number;
}

/** What a refused stream is told to wait: a slot frees as soon as any stream closes, which nobody can foretell. */
export const STREAM_RETRY_AFTER_SECONDS = 5;

/** The credential a stream was opened with: the stream lives no longer than it. */
export type StreamCredential = { kind: 'session'; sessionId: string } | { kind: 'jwt'; /** The JWT's exp, Unix seconds. */ expiresAt: number };

/**
 * What the poller asks the areas that keep credentials and memberships, for every open stream at
 * once (given by the composition: src/notifications/mount.ts). Both read the database, so a
 * revocation or a removal made through any instance, or by an operator's command, is seen.
 */
export interface StreamChecks {
  /** Of these sessions, the ids of those still live at `now` (Unix seconds). */
  liveSessions(ids: readonly string[], now: number): Promise<Set<string>>;
  /** These users' memberships, `workspace_id:role` each; a user with none is absent. */
  memberships(userIds: readonly string[]): Promise<Map<string, string[]>>;
}

/** Ids bound into one statement: several statements past this, so no engine's limit on parameters is met. */
const CHUNK = 200;
/** Notifications one user's streams are given from one look; the rest come at the next. */
const PER_USER_PER_LOOK = 500;

/** Why a stream is ended by the server, said in a comment line before it closes (EventSource ignores comments; a person with curl reads them). */
type EndReason = 'credential ended' | 'access changed' | 'server closing';

/** One open stream and what it has sent. */
class Stream {
  res: ServerResponse | null = null;
  closed = false;
  /** What the user's memberships were when the stream was admitted (`workspace_id:role`). */
  memberships: ReadonlySet<string> = new Set();
  readonly sent = new Set<string>();
  /** The time of the newest id sent (ms): the look-back window is measured from it. */
  newest: number;
  /** Resuming (the client's Last-Event-ID), or going on after a full page: the next look takes what follows this id. */
  resumeAfter: string | null;
  /** A new stream (no Last-Event-ID) sends what comes from now on: its first look only notes what was made before it connected, in the look-back window. */
  primed: boolean;
  readonly connectedFloor = idFloor('ntf', Date.now());
  lastKeepAlive = Date.now();
  /**
   * The client's Last-Event-ID: it holds that notification and those before it, so none of them
   * is sent, also when a later look's window reaches back past it.
   */
  readonly resumedFrom: string | null;
  done: () => void = () => {};

  constructor(
    readonly userId: string,
    readonly credential: StreamCredential,
    lastEventId: string | null,
  ) {
    this.newest = lastEventId ? timeOfId(lastEventId) : Date.now();
    this.resumeAfter = lastEventId;
    this.resumedFrom = lastEventId;
    this.primed = lastEventId !== null;
  }

  floor(lookbackMs: number): string {
    return this.resumeAfter ?? idFloor('ntf', this.newest - lookbackMs);
  }

  /**
   * One look's rows of this stream's user (id order, after the user's lowest floor), given the
   * floor this stream had when the look began. `full`: the look returned as many of the user's
   * rows as one look takes, so more may follow the last one.
   */
  offer(rows: readonly NotificationsTable[], floor: string, full: boolean, lookbackMs: number): void {
    const res = this.res;
    if (!res || this.closed) return;
    for (const row of rows) {
      if (row.id <= floor || (this.resumedFrom !== null && row.id <= this.resumedFrom)) continue;
      if (!this.primed && row.id < this.connectedFloor) this.sent.add(row.id);
      if (this.sent.has(row.id)) continue;
      this.sent.add(row.id);
      this.newest = Math.max(this.newest, timeOfId(row.id));
      res.write(`id: ${row.id}\nevent: notification\ndata: ${JSON.stringify(toNotification(row))}\n\n`);
    }
    // A full page goes on from its last row at the next look: looking back from the newest sent
    // would find the same page again whenever the window holds more than a page (a backlog being
    // resumed, a flood), and never reach the rest. Once a page is not full, the window again.
    const last = rows.length > 0 ? rows[rows.length - 1]!.id : null;
    this.resumeAfter = full && last !== null && last > floor ? last : null;
    this.primed = true;
    const keepFrom = idFloor('ntf', this.newest - lookbackMs);
    for (const id of this.sent) if (id < keepFrom) this.sent.delete(id);
  }
}

/** Where a stream is admitted: its place is held from here, before the request's answer starts. */
export interface StreamSlot {
  readonly stream: unknown;
}

/**
 * The open notification streams of this process (`GET /v1/notifications/stream`), served by one
 * poller: one timer, and at each tick one look at the database for all of them together, so a
 * thousand streams cost what one does, a statement or two a second, not a thousand.
 *
 * Each tick first checks every stream's credential (sessions still live, JWTs not expired,
 * memberships as they were when the stream was admitted) and ends those whose credential ended,
 * then reads the new notifications of every open stream's user (`user_id` and each user's floor,
 * in chunks) and hands each stream its user's. Everything is read from the database, not this
 * process's memory: a notification made by any instance (a job's expiry notice, another server's
 * request) reaches every stream of its user, a session revoked through any instance (or `wsp
 * admin`) ends its streams on every instance, and nothing is lost while the database comes and
 * goes: a tick that fails sends nothing and the next one tries again.
 */
export class NotificationStreams {
  private readonly open = new Set<Stream>();
  private readonly perUser = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private looking = false;

  constructor(
    private readonly deps: { db: Kysely<DB>; clock: Clock; checks: StreamChecks; limits: StreamLimits },
    private readonly timing: StreamTiming = STREAM_TIMING,
  ) {}

  /** Streams open (or admitted and about to be), all users. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Holds a place for one more stream of `userId`, or refuses with 429 (7500 past the user's
   * limit, 7501 past the process's). The place is taken before anything is awaited, so requests
   * arriving together never pass a limit together; then the user's memberships are noted, to
   * end the stream when they change. `lastEventId`: resume after that notification. Serve the
   * slot at once (nothing may fail between: the place is given back when the stream ends).
   */
  async admit(userId: string, credential: StreamCredential, lastEventId: string | null): Promise<StreamSlot> {
    const { perUser, perProcess } = this.deps.limits;
    const mine = this.perUser.get(userId) ?? 0;
    const headers = { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) };
    if (mine >= perUser) {
      throw new ApiError('STREAMS_PER_USER_LIMITED', {
        message: `You already have ${mine} notification streams open on this server, the most it allows one user (WSP_STREAMS_PER_USER=${perUser}): close one, or retry after ${STREAM_RETRY_AFTER_SECONDS} seconds`,
        metadata: { quota: 'streams_per_user', limit: String(perUser), used: String(mine) },
        headers,
      });
    }
    if (this.open.size >= perProcess) {
      throw new ApiError('STREAMS_PER_PROCESS_LIMITED', {
        message: `This server already serves ${this.open.size} notification streams, the most it allows (WSP_STREAMS_PER_PROCESS=${perProcess}): retry after ${STREAM_RETRY_AFTER_SECONDS} seconds`,
        metadata: { quota: 'streams_per_process', limit: String(perProcess), used: String(this.open.size) },
        headers,
      });
    }
    const stream = new Stream(userId, credential, lastEventId);
    this.add(stream);
    try {
      stream.memberships = new Set((await this.deps.checks.memberships([userId])).get(userId) ?? []);
    } catch (err) {
      this.remove(stream);
      throw err;
    }
    return { stream };
  }

  /** Serves an admitted stream until the client leaves, its credential ends or the server closes it. */
  serve(slot: StreamSlot, res: ServerResponse, extraHeaders: Record<string, string> = {}): Promise<void> {
    const stream = slot.stream as Stream;
    return new Promise<void>((resolve) => {
      stream.done = resolve;
      // The client may have gone while the slot was being admitted (its 'close' is past), or the
      // server began closing meanwhile.
      if (res.destroyed || stream.closed) {
        this.remove(stream);
        res.destroy();
        return resolve();
      }
      res.writeHead(200, {
        ...extraHeaders,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        // nginx and similar proxies otherwise hold events back in their buffers.
        'x-accel-buffering': 'no',
      });
      res.write(`retry: 3000\n: connected\n\n`);
      stream.res = res;
      stream.lastKeepAlive = Date.now();
      res.on('close', () => this.end(stream, null));
      // A write racing the client's leaving fails on the socket, not the process: 'close' follows.
      res.on('error', () => {});
      this.startTimer();
    });
  }

  /** Ends every stream (the server is shutting down): clients reconnect to another instance with Last-Event-ID. */
  closeAll(): void {
    for (const stream of [...this.open]) this.end(stream, 'server closing');
  }

  private add(stream: Stream): void {
    this.open.add(stream);
    this.perUser.set(stream.userId, (this.perUser.get(stream.userId) ?? 0) + 1);
  }

  private remove(stream: Stream): void {
    if (!this.open.delete(stream)) return;
    const left = (this.perUser.get(stream.userId) ?? 1) - 1;
    if (left > 0) this.perUser.set(stream.userId, left);
    else this.perUser.delete(stream.userId);
    if (this.open.size === 0) this.stopTimer();
  }

  private end(stream: Stream, reason: EndReason | null): void {
    if (stream.closed) return;
    stream.closed = true;
    this.remove(stream);
    const res = stream.res;
    if (res && !res.writableEnded) {
      if (reason && !res.destroyed) res.write(`: closed: ${reason}\n\n`);
      res.end();
    }
    stream.done();
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.timing.pollMs);
  }

  private stopTimer(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Keep-alives are written at every tick, whatever the database does; the look runs unless the
   * previous one is still under way (a slow or absent database).
   */
  private tick(): void {
    const now = Date.now();
    for (const stream of this.open) {
      if (stream.res && now - stream.lastKeepAlive >= this.timing.keepAliveMs) {
        stream.lastKeepAlive = now;
        stream.res.write(': keep-alive\n\n');
      }
    }
    if (this.looking) return;
    this.looking = true;
    void this.look().finally(() => {
      this.looking = false;
    });
  }

  /** One look for every stream open now: credentials first, then notifications for the streams still open. */
  private async look(): Promise<void> {
    const streams = [...this.open].filter((s) => s.res !== null);
    if (streams.length === 0) return;
    try {
      await this.checkCredentials(streams);
    } catch {
      // The database is away: nothing is sent on a credential that could not be checked; the next tick tries again.
      return;
    }
    const byUser = new Map<string, Stream[]>();
    for (const s of streams) if (!s.closed) pushTo(byUser, s.userId, s);
    const users = [...byUser.keys()];
    for (let i = 0; i < users.length; i += CHUNK) {
      // Each stream's floor as the look begins: what a stream sends is decided against it.
      const floors = new Map<Stream, string>();
      const byFloor = users.slice(i, i + CHUNK).map((userId) => {
        let after: string | null = null;
        for (const s of byUser.get(userId)!) {
          const f = s.floor(this.timing.lookbackMs);
          floors.set(s, f);
          if (after === null || f < after) after = f;
        }
        return { userId, after: after! };
      });
      let rows: NotificationsTable[];
      try {
        rows = await notificationStore.afterFloors(this.deps.db, byFloor, PER_USER_PER_LOOK);
      } catch {
        // The database is away: nothing is marked sent meanwhile; the next tick tries again.
        return;
      }
      const rowsOf = new Map<string, NotificationsTable[]>();
      for (const row of rows) pushTo(rowsOf, row.user_id, row);
      for (const [stream, floor] of floors) {
        const mine = rowsOf.get(stream.userId) ?? [];
        stream.offer(mine, floor, mine.length >= PER_USER_PER_LOOK, this.timing.lookbackMs);
      }
    }
  }

  /**
   * Ends the streams whose credential ended: a session revoked or expired (idle, lifetime, hard
   * end), a JWT past its exp, or a user whose memberships are no longer those the stream was
   * admitted with (removed from a workspace, or another role there): the client reconnects, with
   * Last-Event-ID, under its current rights, or is refused.
   */
  private async checkCredentials(streams: readonly Stream[]): Promise<void> {
    const now = nowSeconds(this.deps.clock);
    for (const s of streams) if (s.credential.kind === 'jwt' && s.credential.expiresAt <= now) this.end(s, 'credential ended');
    const sessionIds = [...new Set(streams.flatMap((s) => (!s.closed && s.credential.kind === 'session' ? [s.credential.sessionId] : [])))];
    const live = new Set<string>();
    for (let i = 0; i < sessionIds.length; i += CHUNK) {
      for (const id of await this.deps.checks.liveSessions(sessionIds.slice(i, i + CHUNK), now)) live.add(id);
    }
    for (const s of streams) if (!s.closed && s.credential.kind === 'session' && !live.has(s.credential.sessionId)) this.end(s, 'credential ended');
    const users = [...new Set(streams.filter((s) => !s.closed).map((s) => s.userId))];
    const memberships = new Map<string, string[]>();
    for (let i = 0; i < users.length; i += CHUNK) {
      for (const [userId, list] of await this.deps.checks.memberships(users.slice(i, i + CHUNK))) memberships.set(userId, list);
    }
    for (const s of streams) {
      if (s.closed) continue;
      const current = new Set(memberships.get(s.userId) ?? []);
      // Joining a workspace only adds rights: the stream goes on.
      for (const m of s.memberships) {
        if (!current.has(m)) {
          this.end(s, 'access changed');
          break;
        }
      }
    }
  }
}

function pushTo<T>(map: Map<string, T[]>, key: string, item: T): void {
  const list = map.get(key);
  if (list) list.push(item);
  else map.set(key, [item]);
}
