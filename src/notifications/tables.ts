/**
 * The notifications area's tables, as stored: notifications. Each joins `DB` here, by declaration
 * merging (src/db/tables.ts says why); the area's modules import their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    notifications: NotificationsTable;
  }
}

export interface NotificationsTable {
  id: string;
  user_id: string;
  type: string;
  resource_type: string;
  resource_id: string;
  title: string;
  body: string;
  severity: string;
  /** JSON object */
  context: string;
  read_at: number | null;
  created_at: number;
  /** Set for notices that must be sent once: unique. */
  dedupe_key: string | null;
}
