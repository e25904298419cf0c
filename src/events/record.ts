import type { Kysely } from 'kysely';
import type { DB, EventsTable } from '../db/tables.js';
import type { Principal, RequestContext } from '../auth/principal.js';
import type { Clock } from '../shared/clock.js';
import { idAt } from '../shared/ids.js';
import { preparedInsert } from '../db/prepared.js';
import { resourceTypeOf, type EventType } from './event-type-schemas.js';

/** Where a request came from: recorded with its events. */
export interface RequestOrigin {
  requestId: string;
  ip: string | null;
  userAgent: string | null;
}

export type ActorKind = 'user' | 'api_token' | 'anonymous' | 'system';

/** Who an event is by, when it is not a request context (a sign-in, before any credential). */
export interface EventSource {
  workspaceId: string | null;
  actor: { kind: ActorKind; id: string | null };
  credentialId: string | null;
  origin?: RequestOrigin | undefined;
}

const credentialOf = (p: Principal): string | null => (p.kind === 'session' ? p.sessionId : p.kind === 'api_token' ? p.tokenId : null);

export function sourceOf(ctx: RequestContext): EventSource {
  const p = ctx.principal;
  return {
    workspaceId: ctx.workspaceId,
    actor: p.kind === 'api_token' ? { kind: 'api_token', id: p.tokenId } : { kind: 'user', id: p.userId },
    credentialId: credentialOf(p),
    origin: ctx.origin,
  };
}

/**
 * Appends events. `record` takes the transaction of the change the event describes (or, for a
 * change of one statement, `db` itself is not enough: run both in one `db.transaction()`), so an
 * event exists exactly when its change committed.
 */
const insertEvent = preparedInsert('events', [
  'id',
  'workspace_id',
  'type',
  'actor_kind',
  'actor_id',
  'credential_id',
  'resource_type',
  'resource_id',
  'request_id',
  'ip',
  'user_agent',
  'created_at',
  'data',
]);

/** What else an event sets off in its transaction (webhook deliveries): given by the composition root. */
export type EventSubscriber = (trx: Kysely<DB>, event: EventsTable) => Promise<void>;

export class EventLog {
  private readonly subscribers = new Map<string, EventSubscriber>();

  constructor(private readonly clock: Clock) {}

  /**
   * Adds what every event sets off (src/service-deps.ts, once per process). A name subscribed twice is
   * refused: its side effect would run twice per event (two deliveries' worth of work each time).
   */
  subscribe(name: string, subscriber: EventSubscriber): void {
    if (this.subscribers.has(name)) throw new Error(`the event subscriber ${name} is subscribed twice`);
    this.subscribers.set(name, subscriber);
  }

  /** The names subscribed, in order. */
  subscriberNames(): string[] {
    return [...this.subscribers.keys()];
  }

  async record(trx: Kysely<DB>, by: RequestContext | EventSource, type: EventType, resourceId: string, data: Record<string, unknown> = {}): Promise<EventsTable> {
    const source = 'principal' in by ? sourceOf(by) : by;
    // The id and `created_at` from one reading of the clock: the audit log's time filters are
    // ranges of ids (src/audit/store.ts), served by the index of every other filter.
    const ms = this.clock.nowMs();
    const id = idAt('evt', ms);
    const row: EventsTable = {
      id,
      workspace_id: source.workspaceId,
      type,
      actor_kind: source.actor.kind,
      actor_id: source.actor.id,
      credential_id: source.credentialId,
      resource_type: resourceTypeOf(type),
      resource_id: resourceId,
      request_id: source.origin?.requestId ?? null,
      ip: source.origin?.ip ?? null,
      user_agent: source.origin?.userAgent ?? null,
      created_at: Math.floor(ms / 1000),
      data: JSON.stringify(data),
    };
    await insertEvent(trx, row);
    // A user's own events (no workspace) reach no workspace's webhooks.
    if (row.workspace_id !== null) for (const s of this.subscribers.values()) await s(trx, row);
    return row;
  }
}
