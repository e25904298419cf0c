/**
 * The webhooks area's tables, as stored: webhooks, their deliveries and each delivery's attempts. Each joins `DB` here, by
 * declaration merging (src/db/tables.ts says why); the area's modules import their row types from
 * this file.
 */
declare module '../db/tables.js' {
  interface DB {
    webhooks: WebhooksTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  }
}

export type WebhookState = 'enabled' | 'disabled';

export type DeliveryState = 'pending' | 'succeeded' | 'failed';

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** JSON array of event types and `<resource>.*` patterns. */
  event_types: string;
  secret_sealed: string;
  secret_key_id: string;
  state: WebhookState;
  disabled_reason: string | null;
  /** When its deliveries began failing without a success since; null while they succeed. */
  failing_since: number | null;
  /** Timeouts and connection failures in a row (src/webhooks/circuit.ts); 0 after any answer. */
  circuit_failures: number;
  /** While the circuit is open: until when its deliveries wait (Unix seconds); then one probe is sent. */
  circuit_open_until: number | null;
  etag: string;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  workspace_id: string;
  event_id: string;
  event_type: string;
  /** The JSON sent, fixed when the event is recorded. */
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** One HTTP attempt of a delivery (migration 0026): what was sent and what came back. */
export interface WebhookDeliveryAttemptsTable {
  delivery_id: string;
  /** 1, 2, ... per delivery, in the order the attempts were made. */
  number: number;
  started_at: number;
  duration_ms: number;
  /** The endpoint's URL when the attempt was made. */
  url: string;
  /** JSON array of `[name, value]`: the headers sent, signature included (it is derived, never the secret). */
  request_headers: string;
  /** Null when there was no HTTP answer (`error` says why). */
  response_status: number | null;
  /** JSON array of `[name, value]` as received, bounded (src/webhooks/sender.ts); null without an answer. */
  response_headers: string | null;
  /** 0/1: some headers were dropped or cut. */
  response_headers_truncated: number;
  /** The start of the body as text (src/webhooks/sender.ts bounds it); null without an answer. */
  response_body: string | null;
  /** 0/1: the body went on past what is kept. */
  response_body_truncated: number;
  error: string | null;
}
