/** Hourly: events older than WSP_AUDIT_RETENTION_DAYS are deleted. */
export const PURGE_AUDIT_EVENTS = 'audit.purge_events';
