/**
 * The webhooks area's tables, as stored: webhooks and their deliveries. Each joins `DB` here, by
 * declaration merging (src/db/tables.ts says why); the area's modules import their row types from
 * this file.
 */
declare module '../db/tables.js' {
  interface DB {
    webhooks: WebhooksTable;
    webhook_deliveries: WebhookDeliveriesTable;
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
