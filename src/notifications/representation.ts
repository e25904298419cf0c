import type { NotificationsTable } from './tables.js';

/** A stored notification as the API shows it. */
export function toNotification(row: NotificationsTable) {
  return {
    id: row.id,
    type: row.type,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    title: row.title,
    body: row.body,
    severity: row.severity,
    context: JSON.parse(row.context) as Record<string, unknown>,
    read_at: row.read_at,
    created_at: row.created_at,
  };
}
