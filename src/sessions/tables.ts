/**
 * The sessions area's tables, as stored: sessions. Each joins `DB` here, by declaration merging
 * (src/db/tables.ts says why); the area's modules import their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    sessions: SessionsTable;
  }
}

export type SessionIssuer = 'password' | 'oidc' | 'device' | 'operator';

export interface SessionsTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: number;
  last_used_at: number;
  /** The idle expiry: extended on use. */
  expires_at: number;
  issued_by: SessionIssuer;
  user_agent: string | null;
  ip: string | null;
  /** A hard end besides the absolute lifetime: the approving JWT's exp for a device login. */
  not_after: number | null;
  /** What a write made with this session as a cookie must send as X-CSRF-Token (null: sessions made before). */
  csrf_token: string | null;
}
