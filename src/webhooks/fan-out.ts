import type { Kysely } from 'kysely';
import type { DB, EventsTable } from '../db/tables.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Clock } from '../shared/clock.js';
import { nowSeconds } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { toWireEvent } from '../events/wire.js';
import { webhookStore } from './store.js';
import { subscribes } from './matching.js';
import { WEBHOOK_DELIVER, type DeliverJob } from './job-kinds.js';

/**
 * Makes a delivery (and its job) for each enabled endpoint of the event's workspace that takes
 * it, in the event's transaction: an event that rolls back sends nothing, and one that commits
 * is delivered even if this process dies at once.
 */
export function webhookFanOut(deps: { clock: Clock; jobs: JobQueue }) {
  return async (trx: Kysely<DB>, event: EventsTable): Promise<void> => {
    const endpoints = await webhookStore.enabledOf(trx, event.workspace_id!);
    if (endpoints.length === 0) return;
    const body = JSON.stringify(toWireEvent(event));
    for (const w of endpoints) {
      if (!subscribes(JSON.parse(w.event_types) as string[], event.type)) continue;
      await queueDelivery(trx, deps, { webhookId: w.id, workspaceId: event.workspace_id!, eventId: event.id, eventType: event.type, body });
    }
  };
}

export async function queueDelivery(
  trx: Kysely<DB>,
  deps: { clock: Clock; jobs: JobQueue },
  d: { webhookId: string; workspaceId: string; eventId: string; eventType: string; body: string },
): Promise<string | null> {
  const now = nowSeconds(deps.clock);
  const id = newId('whd');
  const made = await webhookStore.insertDelivery(trx, {
    id,
    webhook_id: d.webhookId,
    workspace_id: d.workspaceId,
    event_id: d.eventId,
    event_type: d.eventType,
    body: d.body,
    state: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    created_at: now,
    updated_at: now,
  });
  if (!made) return null;
  // The workspace is the job's group: its share of the delivery slots is counted by it (webhookDeliveryPool).
  await deps.jobs.enqueue(trx, { kind: WEBHOOK_DELIVER, payload: { delivery_id: id, attempt: 0 } satisfies DeliverJob, dedupeKey: `${id}:0`, group: d.workspaceId });
  return id;
}
