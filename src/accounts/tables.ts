import type { Generated } from 'kysely';
import type { Role } from '../auth/principal.js';
import type { WindowCounterTable } from '../db/tables.js';

/**
 * The accounts area's tables, as stored: sign-in limits, invitations and single sign-on logins
 * under way. Each joins `DB` here, by declaration merging (src/db/tables.ts says why); the area's
 * modules import their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    sign_in_limits: SignInLimitsTable;
    invitations: InvitationsTable;
    oidc_logins: OidcLoginsTable;
  }
}

/**
 * Failed sign-ins per `ip:<address>`, `ip-account:<address> <email key>` and `account:<email key>`,
 * in fixed windows, and the password checks under way (src/accounts/sign-in-limits.ts).
 */
export interface SignInLimitsTable extends WindowCounterTable {
  /** Places taken by password checks under way. */
  in_flight: Generated<number>;
  /** When a place was last taken (Unix seconds): places not renewed for a minute are a dead process's. */
  flight_at: Generated<number>;
}

export interface InvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  email_key: string;
  role: Role;
  /** SHA-256 of the secret in the invitation's link, which is shown once. */
  token_hash: string;
  created_by: string;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  accepted_by: string | null;
  revoked_at: number | null;
}

/** A single sign-on login under way: what its callback must find again (by the state's hash). */
export interface OidcLoginsTable {
  state_hash: string;
  code_verifier: string;
  nonce: string;
  return_to: string;
  expires_at: number;
  /** SHA-256 of the binding cookie the starting browser holds; null only for logins started before migration 0021. */
  browser_hash: string | null;
}
