import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, UnixSeconds } from '../http/schemas.js';
import { EVENT_TYPE_FILTERS } from '../audit/schemas.js';
import { patterned } from '../shared/pattern-schemas.js';

export const WEBHOOK_URL_MAX = 2048;

const EventTypes = Type.Array(Type.Unsafe<string>({ type: 'string', enum: EVENT_TYPE_FILTERS }), {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: "The events sent to the endpoint: event types (see GET /v1/audit_events) or `<resource>.*`; a person's sign-ins and sessions belong to no workspace and are not offered",
});
const Url = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_URL_MAX,
  ...patterned('^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$', 'an https:// URL without spaces', 'https://hooks.example.com/wsp'),
  description: `Where deliveries are POSTed: https, a public address (up to ${WEBHOOK_URL_MAX} characters)`,
});
const Description = Type.String({ maxLength: 500, description: 'A note for people, up to 500 characters' });

export const CreateWebhookBody = Type.Object({ url: Url, event_types: EventTypes, description: Type.Optional(Description) }, { title: 'CreateWebhookBody', additionalProperties: false });
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    event_types: Type.Optional(EventTypes),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(Type.Boolean({ description: '`true` enables a disabled endpoint again (its failure count starts over); `false` disables it' })),
  },
  { title: 'UpdateWebhookBody', additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

const Circuit = Type.Object(
  {
    state: Type.Union([Type.Literal('closed'), Type.Literal('open')], {
      description:
        '`open`: the endpoint timed out or could not be reached 3 times in a row, so its deliveries are not sent (their attempts not counted) until `open_until`; then one is sent as a probe. Any HTTP answer closes the circuit; another timeout opens it again for twice as long (1 min, 2 min, ... up to 1 h)',
    }),
    open_until: Type.Union([UnixSeconds(), Type.Null()], { description: 'While open: when the next delivery is sent as a probe' }),
  },
  {
    title: 'WebhookCircuit',
    additionalProperties: false,
    description: "The endpoint's circuit breaker: a receiver that does not answer stops holding delivery slots",
    examples: [{ state: 'closed', open_until: null }],
  },
);

export const Webhook = Type.Object(
  {
    id: Type.String({ description: '`wh_<id>`' }),
    url: Type.String(),
    event_types: Type.Array(Type.String()),
    description: Type.Union([Type.String(), Type.Null()]),
    state: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
    disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was disabled: by hand, or after a day of failed deliveries' }),
    circuit: Circuit,
    etag: Type.String(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'Webhook', additionalProperties: false },
);
export type Webhook = Static<typeof Webhook>;

export const CreatedWebhook = Type.Object(
  { ...Webhook.properties, secret: Type.String({ description: '`whsec_` + base64 of 24 random bytes: the signing secret, shown only in this answer' }) },
  { title: 'CreatedWebhook', additionalProperties: false },
);

const UrlPolicy = Type.Object(
  {
    allow_http: Type.Boolean({ description: '`true`: a URL may be plain http (WSP_WEBHOOKS_ALLOW_HTTP); otherwise https only' }),
    allow_private: Type.Boolean({ description: '`true`: a URL may reach private, loopback and link-local addresses (WSP_WEBHOOKS_ALLOW_PRIVATE); otherwise only public ones, also after DNS' }),
  },
  {
    title: 'WebhookUrlPolicy',
    additionalProperties: false,
    description: "The rules this server holds a webhook's URL to, as its operator configured them: read-only, so a form can say them before it is submitted",
    examples: [{ allow_http: false, allow_private: false }],
  },
);

const page = ListEnvelope(Webhook);
export const WebhookList = Type.Object({ ...page.properties, url_policy: UrlPolicy }, { title: 'WebhookList', additionalProperties: false });

export const Delivery = Type.Object(
  {
    id: Type.String({ description: '`whd_<id>`' }),
    webhook_id: Type.String(),
    event_id: Type.String({ description: 'Sent as the webhook-id header: a receiver dedupes on it' }),
    event_type: Type.String(),
    state: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      description: '`pending`: not sent yet or to be retried at `next_attempt_at`; `failed`: retries ran out or the endpoint was disabled (POST ...:retry sends it again)',
    }),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Type.Union([UnixSeconds(), Type.Null()]),
    last_attempt_at: Type.Union([UnixSeconds(), Type.Null()]),
    last_status: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status of the last attempt; null when there was no answer' }),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: UnixSeconds(),
  },
  { title: 'Delivery', additionalProperties: false },
);
export type Delivery = Static<typeof Delivery>;

export const DeliveryList = ListEnvelope(Delivery);
export const ListWebhooksQuery = PageQuery(100, 50);
export const ListDeliveriesQuery = PageQuery(100, 50);
export const WebhookIdParams = Type.Object({ id: PathId(64, 'Webhook id, `wh_<id>` or bare') });
export const DeliveryIdParams = Type.Object({ id: PathId(64, 'Webhook id, `wh_<id>` or bare'), did: PathId(64, 'Delivery id, `whd_<id>` or bare') });

/** What of a delivery's body an attempt's record shows (the body itself is the delivery's, sent whole every time). */
export const REQUEST_BODY_SHOWN_BYTES = 16_384;

const Header = Type.Object(
  { name: Type.String({ description: 'The header name, as written' }), value: Type.String({ description: 'Its value' }) },
  { title: 'HttpHeader', additionalProperties: false, description: 'One HTTP header' },
);

const AttemptRequest = Type.Object(
  {
    method: Type.Literal('POST', { description: 'Deliveries are always POSTed' }),
    url: Type.String({ description: "The endpoint's URL when the attempt was made (it may have been changed since)" }),
    headers: Type.Array(Header, {
      description:
        'Every header sent: `content-type`, `user-agent`, the three `webhook-*` (the signature is derived from the secret, never the secret) and `content-length`. Nothing else is sent, no credential of ours',
    }),
    body: Type.Union([Type.String(), Type.Null()], {
      description: `The event sent, as JSON (the audit log's form), its first ${REQUEST_BODY_SHOWN_BYTES / 1024} KiB; null when withheld: an API token reads it only with \`audit:read\` too, as it reads the audit log`,
    }),
    body_truncated: Type.Boolean({ description: `\`true\`: the body sent was longer than the ${REQUEST_BODY_SHOWN_BYTES / 1024} KiB shown` }),
  },
  { title: 'WebhookAttemptRequest', additionalProperties: false, description: 'What was sent' },
);

const AttemptResponse = Type.Object(
  {
    status: Type.Integer({ minimum: 100, maximum: 999, description: 'The HTTP status answered: a 2xx is a success' }),
    headers: Type.Array(Header, { description: 'The first 50 headers received, in order, each value up to 1,024 characters' }),
    headers_truncated: Type.Boolean({ description: '`true`: headers past the first 50, or part of a long value, are not shown' }),
    body: Type.String({ description: 'The start of the body, as UTF-8 text (up to 4 KiB; bytes that are not UTF-8 show as U+FFFD)' }),
    body_truncated: Type.Boolean({ description: '`true`: the body went on past what is shown' }),
  },
  { title: 'WebhookAttemptResponse', additionalProperties: false, description: 'What the receiver answered' },
);

export const DeliveryAttempt = Type.Object(
  {
    number: Type.Integer({ minimum: 1, description: "1 for the delivery's first HTTP request, and so on (a delivery's record keeps its newest 100)" }),
    started_at: UnixSeconds('When the request was started'),
    duration_ms: Type.Integer({ minimum: 0, description: 'From the start to the answer read whole, or to the failure' }),
    request: AttemptRequest,
    response: Type.Union([AttemptResponse, Type.Null()], { description: 'null when there was no HTTP answer within 10 s: `error` says what happened' }),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the attempt failed (the delivery\'s `last_error` then): no answer, a refused connection or address, or a status that is not 2xx ("answered 500: ..."); null on success',
    }),
  },
  {
    title: 'WebhookDeliveryAttempt',
    additionalProperties: false,
    description: 'One HTTP request made for a delivery, and what came back',
    examples: [
      {
        number: 1,
        started_at: 1764403200,
        duration_ms: 84,
        request: {
          method: 'POST',
          url: 'https://hooks.example.com/wsp',
          headers: [
            { name: 'content-type', value: 'application/json' },
            { name: 'user-agent', value: 'workspace-platform-webhooks/1' },
            { name: 'webhook-id', value: 'evt_01kb6x3z4p7q8r9s0t1v2w3x4y' },
            { name: 'webhook-timestamp', value: '1764403200' },
            { name: 'webhook-signature', value: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' },
            { name: 'content-length', value: '312' },
          ],
          body: '{"id":"evt_01kb6x3z4p7q8r9s0t1v2w3x4y","type":"secret.created", ...}',
          body_truncated: false,
        },
        response: { status: 500, headers: [{ name: 'Content-Type', value: 'text/plain' }], headers_truncated: false, body: 'database unavailable', body_truncated: false },
        error: 'answered 500: database unavailable',
      },
    ],
  },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

export const DeliveryAttemptList = ListEnvelope(DeliveryAttempt, "A delivery's attempts, oldest first");
export const ListDeliveryAttemptsQuery = PageQuery(100, 50);
