import type { EventsTable } from '../db/tables.js';

/** An event as the API shows it (the audit log) and webhooks send it. */
export interface WireEvent {
  id: string;
  type: string;
  workspace_id: string | null;
  actor: { kind: 'user' | 'api_token' | 'anonymous' | 'system'; id: string | null };
  credential_id: string | null;
  resource: { type: string; id: string };
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  created_at: number;
  data: Record<string, unknown>;
}

export const toWireEvent = (r: EventsTable): WireEvent => ({
  id: r.id,
  type: r.type,
  workspace_id: r.workspace_id,
  actor: { kind: r.actor_kind as WireEvent['actor']['kind'], id: r.actor_id },
  credential_id: r.credential_id,
  resource: { type: r.resource_type, id: r.resource_id },
  request_id: r.request_id,
  ip: r.ip,
  user_agent: r.user_agent,
  created_at: Number(r.created_at),
  data: JSON.parse(r.data) as Record<string, unknown>,
});
