import type { App } from '../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { quoteEtag } from '../http/etag.js';
import { requireRoleOfUser } from '../auth/workspace-context.js';
import type { FastifyRequest } from 'fastify';
import {
  CreatedWebhook,
  CreateWebhookBody,
  Delivery,
  DeliveryAttemptList,
  DeliveryIdParams,
  DeliveryList,
  ListDeliveryAttemptsQuery,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  UpdateWebhookBody,
  Webhook,
  WebhookIdParams,
  WebhookList,
} from './schemas.js';
import type { WebhookService } from './service.js';
import { guarded } from '../auth/roles.js';

const TAGS = ['webhooks'];
/** Owners and admins; API tokens by their scope (webhooks:read / webhooks:write). */
const manager = (request: FastifyRequest) => {
  const ctx = workspaceCtx(request);
  requireRoleOfUser(ctx, ['owner', 'admin']);
  return ctx;
};

const SIGNING =
  "Deliveries follow the Standard Webhooks specification: a POST of the event as JSON (the audit log's form) with `webhook-id` (the event id: dedupe on it), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the bytes of the secret after `whsec_`). A 2xx within 10 s is a success; otherwise retried after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. After a day of failures the endpoint is disabled and the workspace's owners and admins are notified. After 3 timeouts or connection failures in a row its `circuit` opens: its deliveries wait, their attempts not counted, until one sent as a probe gets an answer. Redirects are not followed.";

export function webhookRoutes(app: App, webhooks: WebhookService): void {
  app.post(
    '/webhooks',
    {
      config: { scope: 'workspace', ...guarded('webhooks.manage'), tokenScope: 'webhooks:write', event: 'webhook.created' },
      schema: {
        operationId: 'createWebhook',
        tags: TAGS,
        summary: 'Add a webhook endpoint (owner or admin)',
        description: `The answer holds the signing \`secret\`, shown only here. The URL must be https and reach a public address (a DNS name resolving to a private, loopback or link-local one is refused too), unless the operator allows it (WSP_WEBHOOKS_ALLOW_HTTP, WSP_WEBHOOKS_ALLOW_PRIVATE). A workspace with as many webhooks as its quota (WSP_QUOTA_WEBHOOKS): 409, code 7320. ${SIGNING}`,
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(manager(request), request.body);
      reply.header('etag', quoteEtag(created.etag));
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/webhooks',
    {
      config: { scope: 'workspace', ...guarded('webhooks.read'), tokenScope: 'webhooks:read' },
      schema: {
        operationId: 'listWebhooks',
        tags: TAGS,
        summary: "List the workspace's webhook endpoints, newest first (owner or admin)",
        description:
          'Never shows a signing secret. `url_policy` says which URLs this server accepts (https only or http too, public addresses only or private ones too), as configured by its operator.',
        headers: requestHeaders(),
        querystring: ListWebhooksQuery,
        response: { 200: WebhookList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => webhooks.list(manager(request), request.query.limit, request.query.cursor),
  );

  app.get(
    '/webhooks/:id',
    {
      config: { scope: 'workspace', ...guarded('webhooks.read'), tokenScope: 'webhooks:read' },
      schema: {
        operationId: 'getWebhook',
        tags: TAGS,
        summary: 'Get a webhook endpoint (owner or admin)',
        headers: requestHeaders(),
        params: WebhookIdParams,
        response: { 200: Webhook, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const webhook = await webhooks.get(manager(request), request.params.id);
      reply.header('etag', quoteEtag(webhook.etag));
      return webhook;
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      config: { scope: 'workspace', ...guarded('webhooks.manage'), tokenScope: 'webhooks:write', event: 'webhook.updated' },
      schema: {
        operationId: 'updateWebhook',
        tags: TAGS,
        summary: 'Change a webhook endpoint (owner or admin, If-Match)',
        description:
          'Each field given replaces that field. `enabled: true` enables a disabled endpoint again (its day of failures starts over); `enabled: false` disables it, and its pending deliveries fail (retry them by hand later). A PATCH that changes nothing keeps the etag.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: WebhookIdParams,
        body: UpdateWebhookBody,
        response: { 200: Webhook, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const webhook = await webhooks.update(manager(request), request.params.id, request.body, request.headers['if-match']);
      reply.header('etag', quoteEtag(webhook.etag));
      return webhook;
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { scope: 'workspace', ...guarded('webhooks.manage'), tokenScope: 'webhooks:write', event: 'webhook.deleted' },
      schema: {
        operationId: 'deleteWebhook',
        tags: TAGS,
        summary: 'Delete a webhook endpoint and its deliveries (owner or admin, If-Match)',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: WebhookIdParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await webhooks.delete(manager(request), request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id(^[^:]+)::test',
    {
      config: { scope: 'workspace', ...guarded('webhooks.manage'), tokenScope: 'webhooks:write', event: 'webhook.tested' },
      schema: {
        operationId: 'testWebhook',
        tags: TAGS,
        summary: 'Send a test event to the endpoint (owner or admin)',
        description: 'Records a `webhook.tested` event and delivers it to this endpoint, whatever event types it takes; answers 202 with the delivery, pending (GET .../deliveries shows how it went).',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: WebhookIdParams,
        response: { 202: Delivery, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => reply.code(202).send(await webhooks.test(manager(request), request.params.id)),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { scope: 'workspace', ...guarded('webhooks.read'), tokenScope: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: TAGS,
        summary: "The endpoint's deliveries, newest first (owner or admin)",
        description: 'One per event sent to the endpoint: its state, attempts, the last status and error, and when the next attempt is due.',
        headers: requestHeaders(),
        params: WebhookIdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: DeliveryList, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => webhooks.deliveries(manager(request), request.params.id, request.query.limit, request.query.cursor),
  );

  app.get(
    '/webhooks/:id/deliveries/:did/attempts',
    {
      config: { scope: 'workspace', ...guarded('webhooks.read'), tokenScope: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookDeliveryAttempts',
        tags: TAGS,
        summary: "A delivery's attempts, oldest first: each request sent and what came back (owner or admin)",
        description:
          "One per HTTP request made for the delivery (a retry by hand adds one too): when, how long, the URL and headers sent and the body (the event; its first 16 KiB), and the answer's status, headers (the first 50) and the start of its body (4 KiB), or the error when nothing came back. An API token sees the body sent only with `audit:read` as well (the body is an event of the audit log); otherwise it is null. A delivery keeps its newest 100 attempts; they go with it, and it goes with its endpoint. A delivery of another endpoint or workspace: 404.",
        headers: requestHeaders(),
        params: DeliveryIdParams,
        querystring: ListDeliveryAttemptsQuery,
        response: { 200: DeliveryAttemptList, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => webhooks.attempts(manager(request), request.params.id, request.params.did, request.query.limit, request.query.cursor),
  );

  app.post(
    '/webhooks/:id/deliveries/:did(^[^:]+)::retry',
    {
      config: { scope: 'workspace', ...guarded('webhooks.manage'), tokenScope: 'webhooks:write', event: 'webhook_delivery.retried' },
      schema: {
        operationId: 'retryWebhookDelivery',
        tags: TAGS,
        summary: 'Send a delivery again now (owner or admin)',
        description: 'Whatever its state; it becomes `pending` and is sent at once, then retried on failure as any delivery. A disabled endpoint: 409, code 7321 (enable it first).',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: DeliveryIdParams,
        response: { 202: Delivery, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => reply.code(202).send(await webhooks.retry(manager(request), request.params.id, request.params.did)),
  );
}
