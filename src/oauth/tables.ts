/**
 * The oauth area's tables, as stored: device authorizations and the guesses of their user codes.
 * Each joins `DB` here, by declaration merging (src/db/tables.ts says why); the area's modules
 * import their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    device_authorizations: DeviceAuthorizationsTable;
    device_guess_limits: DeviceGuessLimitsTable;
  }
}

export type DeviceAuthorizationState = 'pending' | 'approved' | 'denied' | 'redeemed';

export interface DeviceAuthorizationsTable {
  id: string;
  client_id: string;
  device_code_hash: string;
  /** Normalized: 8 letters of BCDFGHJKLMNPQRSTVWXZ, no dash. */
  user_code: string;
  state: DeviceAuthorizationState;
  /** The user who approved or denied. */
  user_id: string | null;
  /** The polling interval now in force: 5 s, plus 5 s for every slow_down. */
  interval_seconds: number;
  /** Unix milliseconds of the last poll: the interval is checked finer than seconds. */
  last_polled_ms: number | null;
  created_at: number;
  decided_at: number | null;
  expires_at: number;
  /** Approved with a JWT: its exp, which the session issued at redemption may not outlive. */
  approver_not_after: number | null;
}

export interface DeviceGuessLimitsTable {
  /** `ip:<address>` or `user:<id>` */
  key: string;
  window_start: number;
  failures: number;
}
