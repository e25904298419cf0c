import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhooksTable } from './tables.js';
import { enforceQuota } from '../quotas/enforce.js';
import { keyringFromConfig } from '../secrets/master-key.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, notFound } from '../shared/errors.js';
import { assertIfMatch, newEtag } from '../shared/etag.js';
import { pageById, pageBySeq } from '../shared/cursor.js';
import { holds } from '../auth/roles.js';
import { checkWebhookUrl } from './url-policy.js';
import { newSigningSecret, sealSecret } from './signing-secret.js';
import { webhookStore } from './store.js';
import { queueDelivery } from './fan-out.js';
import { toWireEvent } from '../events/wire.js';
import { WEBHOOK_DELIVER, type DeliverJob } from './job-kinds.js';
import { REQUEST_BODY_SHOWN_BYTES, type CreateWebhookBody, type Delivery, type DeliveryAttempt, type UpdateWebhookBody, type Webhook } from './schemas.js';
import { writeTransaction } from '../db/write-transaction.js';

export type WebhookServiceDeps = Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'cursors' | 'config' | 'jobs' | 'events'>;

/** Webhooks the workspace has, for its quota figures. */
export const webhookCount = (db: ServiceDeps['db'], workspaceId: string) => webhookStore.count(db, workspaceId);

export const toWebhook = (r: WebhooksTable): Webhook => ({
  id: r.id,
  url: r.url,
  event_types: JSON.parse(r.event_types) as string[],
  description: r.description,
  state: r.state,
  disabled_reason: r.disabled_reason,
  circuit: { state: r.circuit_open_until === null ? 'closed' : 'open', open_until: r.circuit_open_until === null ? null : Number(r.circuit_open_until) },
  etag: r.etag,
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

export const toDelivery = (r: WebhookDeliveriesTable): Delivery => ({
  id: r.id,
  webhook_id: r.webhook_id,
  event_id: r.event_id,
  event_type: r.event_type,
  state: r.state,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
  last_attempt_at: r.last_attempt_at === null ? null : Number(r.last_attempt_at),
  last_status: r.last_status,
  last_error: r.last_error,
  created_at: Number(r.created_at),
});

/** The first `max` bytes of UTF-8 text, cut before a character rather than through one. */
function utf8Start(text: string, max: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { text, truncated: false };
  let end = max;
  // A continuation byte (10xxxxxx) is inside a character: back up to where that character starts.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}

const headerList = (json: string) => (JSON.parse(json) as [string, string][]).map(([name, value]) => ({ name, value }));

/** An attempt's record; `body` is its delivery's (the same every attempt), or null when the caller may not read it. */
export const toAttempt = (r: WebhookDeliveryAttemptsTable, body: string | null): DeliveryAttempt => {
  const shown = body === null ? null : utf8Start(body, REQUEST_BODY_SHOWN_BYTES);
  return {
    number: r.number,
    started_at: Number(r.started_at),
    duration_ms: r.duration_ms,
    request: { method: 'POST', url: r.url, headers: headerList(r.request_headers), body: shown?.text ?? null, body_truncated: shown?.truncated ?? false },
    response:
      r.response_status === null
        ? null
        : {
            status: r.response_status,
            headers: headerList(r.response_headers ?? '[]'),
            headers_truncated: r.response_headers_truncated === 1,
            body: r.response_body ?? '',
            body_truncated: r.response_body_truncated === 1,
          },
    error: r.error,
  };
};

/** Webhooks (docs/spec-gaps.md, "Webhooks"): endpoints, their test events and deliveries. Owners and admins only (the routes' roles). */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { db, engine, clock, cursors, config, jobs, events } = deps;
  const keyring = keyringFromConfig(config);

  async function visible(ctx: WorkspaceContext, rawId: string): Promise<WebhooksTable> {
    const row = await webhookStore.get(db, ctx.workspaceId, canonicalId('wh', rawId));
    if (!row) throw notFound('webhook');
    return row;
  }

  return {
    async create(ctx: WorkspaceContext, body: CreateWebhookBody) {
      const url = await checkWebhookUrl(body.url, config.webhooks);
      const now = nowSeconds(clock);
      const id = newId('wh');
      const secret = newSigningSecret();
      const row: WebhooksTable = {
        id,
        workspace_id: ctx.workspaceId,
        url,
        description: body.description ?? null,
        event_types: JSON.stringify(body.event_types),
        ...sealSecret(keyring, id, secret),
        state: 'enabled',
        disabled_reason: null,
        failing_since: null,
        circuit_failures: 0,
        circuit_open_until: null,
        etag: newEtag(),
        created_at: now,
        updated_at: now,
      };
      await writeTransaction(db, ctx, async (trx) => {
        const limit = config.quotas.webhooks;
        await enforceQuota(trx, ctx.workspaceId, {
          quota: 'webhooks',
          limit,
          error: 'WEBHOOK_QUOTA_EXCEEDED',
          count: async () => ({ count: await webhookStore.count(trx, ctx.workspaceId) }),
          message: (held) => `The workspace has ${held.count} webhooks; its quota is ${limit}: delete one first`,
        });
        await webhookStore.insert(trx, row);
        await events.record(trx, ctx, 'webhook.created', id, { url, event_types: body.event_types });
      });
      return { ...toWebhook(row), secret };
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      const page = await pageById(cursors, `webhooks:${ctx.workspaceId}`, { limit, cursor }, (after, take) => webhookStore.page(db, ctx.workspaceId, take, after), toWebhook);
      // The operator's URL rules ride along with the list a form to add an endpoint sits under, so
      // the form states them rather than learning them from a refusal (issue 50.6).
      return { ...page, url_policy: { allow_http: config.webhooks.allowHttp, allow_private: config.webhooks.allowPrivate } };
    },

    get: async (ctx: WorkspaceContext, rawId: string) => toWebhook(await visible(ctx, rawId)),

    async update(ctx: WorkspaceContext, rawId: string, body: UpdateWebhookBody, ifMatch: string) {
      const id = canonicalId('wh', rawId);
      const url = body.url === undefined ? undefined : await checkWebhookUrl(body.url, config.webhooks);
      const now = nowSeconds(clock);
      return writeTransaction(db, ctx, async (trx) => {
        const row = await webhookStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!row) throw notFound('webhook');
        assertIfMatch(ifMatch, row.etag);
        // A new receiver, or an endpoint enabled again, starts with its circuit closed.
        const freshCircuit = (url !== undefined && url !== row.url) || (body.enabled === true && row.state === 'disabled') ? { circuit_failures: 0, circuit_open_until: null } : {};
        const patch: Partial<WebhooksTable> = {
          ...(url !== undefined ? { url } : {}),
          ...(body.event_types !== undefined ? { event_types: JSON.stringify(body.event_types) } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.enabled === true && row.state === 'disabled' ? { state: 'enabled' as const, disabled_reason: null, failing_since: null } : {}),
          ...(body.enabled === false && row.state === 'enabled' ? { state: 'disabled' as const, disabled_reason: 'disabled by hand' } : {}),
          ...freshCircuit,
        };
        const changed = Object.entries(patch).filter(([k, v]) => row[k as keyof WebhooksTable] !== v);
        if (changed.length === 0) return toWebhook(row);
        const next = { ...row, ...patch, etag: newEtag(), updated_at: now };
        await webhookStore.update(trx, id, { ...patch, etag: next.etag, updated_at: now });
        if (patch.state === 'disabled') await webhookStore.failPending(trx, id, 'the endpoint was disabled', now);
        await events.record(trx, ctx, 'webhook.updated', id, {
          fields: changed
            .filter(([k]) => !k.startsWith('circuit_'))
            .map(([k]) => (k === 'failing_since' || k === 'disabled_reason' ? 'state' : k))
            .filter((k, i, a) => a.indexOf(k) === i),
          state: next.state,
        });
        return toWebhook(next);
      });
    },

    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string) {
      const id = canonicalId('wh', rawId);
      await writeTransaction(db, ctx, async (trx) => {
        const row = await webhookStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!row) throw notFound('webhook');
        assertIfMatch(ifMatch, row.etag);
        await webhookStore.delete(trx, id);
        await events.record(trx, ctx, 'webhook.deleted', id, { url: row.url });
      });
    },

    /** Sends a `webhook.tested` event to this endpoint (whatever it subscribes to): the delivery, pending. */
    async test(ctx: WorkspaceContext, rawId: string) {
      const row = await visible(ctx, rawId);
      return writeTransaction(db, ctx, async (trx) => {
        const event = await events.record(trx, ctx, 'webhook.tested', row.id, { url: row.url });
        const eventId = event.id;
        // The fan-out made it already when the endpoint takes webhook.* events; otherwise here.
        const made = await queueDelivery(trx, { clock, jobs }, { webhookId: row.id, workspaceId: ctx.workspaceId, eventId, eventType: 'webhook.tested', body: JSON.stringify(toWireEvent(event)) });
        const id = made ?? (await trx.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', row.id).where('event_id', '=', eventId).executeTakeFirstOrThrow()).id;
        return toDelivery((await webhookStore.delivery(trx, ctx.workspaceId, row.id, id))!);
      });
    },

    async deliveries(ctx: WorkspaceContext, rawId: string, limit: number, cursor: string | undefined) {
      const row = await visible(ctx, rawId);
      return pageById(cursors, `webhook_deliveries:${row.id}`, { limit, cursor }, (after, take) => webhookStore.deliveries(db, ctx.workspaceId, row.id, take, after), toDelivery);
    },

    /**
     * A delivery's attempts, oldest first. The body sent is an event of the audit log, so a token
     * sees it only if it may read that log too (`audit:read`); owners and admins always may.
     */
    async attempts(ctx: WorkspaceContext, rawId: string, rawDeliveryId: string, limit: number, cursor: string | undefined) {
      const row = await visible(ctx, rawId);
      const delivery = await webhookStore.delivery(db, ctx.workspaceId, row.id, canonicalId('whd', rawDeliveryId));
      if (!delivery) throw notFound('delivery', ['path', 'did']);
      const body = holds(ctx, 'audit.read') ? delivery.body : null;
      return pageBySeq(
        cursors,
        `webhook_delivery_attempts:${delivery.id}`,
        { limit, cursor },
        (after, take) => webhookStore.attempts(db, delivery.id, take, after),
        (a) => a.number,
        (a) => toAttempt(a, body),
      );
    },

    /** Sends a delivery again now, whatever its state; the endpoint must be enabled (409 otherwise). */
    async retry(ctx: WorkspaceContext, rawId: string, rawDeliveryId: string) {
      const row = await visible(ctx, rawId);
      const delivery = await webhookStore.delivery(db, ctx.workspaceId, row.id, canonicalId('whd', rawDeliveryId));
      if (!delivery) throw notFound('delivery', ['path', 'did']);
      if (row.state !== 'enabled') throw new ApiError('WEBHOOK_DISABLED', { metadata: { state: row.state } });
      const now = nowSeconds(clock);
      return writeTransaction(db, ctx, async (trx) => {
        await webhookStore.updateDelivery(trx, delivery.id, { state: 'pending', next_attempt_at: now, updated_at: now });
        await jobs.enqueue(trx, {
          kind: WEBHOOK_DELIVER,
          payload: { delivery_id: delivery.id, attempt: delivery.attempts } satisfies DeliverJob,
          dedupeKey: `${delivery.id}:retry:${delivery.attempts}:${now}`,
          group: ctx.workspaceId,
        });
        await events.record(trx, ctx, 'webhook_delivery.retried', delivery.id, { webhook_id: row.id, event_id: delivery.event_id });
        return toDelivery({ ...delivery, state: 'pending', next_attempt_at: now, updated_at: now });
      });
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
