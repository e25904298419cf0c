import type { ComputeSuspensionsTable } from '../tables.js';
import type { NewNotification } from '../../notifications/service.js';

export const DAY = 86_400;
/** docs/spec-gaps.md, "Compute": `info` when 7 days or less remain, `warning` when 1 day or less remains. */
export const INFO_WITHIN = 7 * DAY;
export const WARNING_WITHIN = 1 * DAY;

/** Notice levels, in the order they are sent (suspension.notices_sent). */
export const NOTICE = { info: 1, warning: 2 } as const;

export function expiryNotice(s: ComputeSuspensionsTable, level: number, userIds: string[], now: number): NewNotification {
  const warning = level === NOTICE.warning;
  const days = Math.max(1, Math.ceil((s.expires_at - now) / DAY));
  const when = new Date(s.expires_at * 1000).toISOString().replace('.000Z', 'Z');
  return {
    userIds,
    type: 'machine_expiry',
    resource_type: 'machine',
    resource_id: s.machine_id,
    title: `Suspended machine ${s.hostname} is deleted in ${days} day${days === 1 ? '' : 's'}`,
    body: `The snapshot of suspended machine ${s.hostname} (${s.server_type} in ${s.location}) is deleted at ${when}. Resume the suspension before then to keep the machine.`,
    severity: warning ? 'warning' : 'info',
    context: { workspace_id: s.workspace_id, suspension_id: s.id, machine_id: s.machine_id, hostname: s.hostname, expires_at: s.expires_at },
    dedupeKey: `machine_expiry:${s.id}:${warning ? 'warning' : 'info'}`,
  };
}
