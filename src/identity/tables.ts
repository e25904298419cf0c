import type { Role } from '../auth/principal.js';

/**
 * The identity area's tables, as stored: users, the workspaces they belong to and their roles
 * there, and the outside subjects linked to them. Each joins `DB` here, by declaration merging
 * (src/db/tables.ts says why); the area's modules import their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    users: UsersTable;
    workspaces: WorkspacesTable;
    memberships: MembershipsTable;
    external_identities: ExternalIdentitiesTable;
    oidc_identities: OidcIdentitiesTable;
  }
}

export interface UsersTable {
  id: string;
  name: string | null;
  email: string | null;
  /** The email lower-cased and trimmed: the sign-in key, unique; null for a user without one. */
  email_key: string | null;
  /** argon2id (PHC string); null: the user cannot sign in with a password. */
  password_hash: string | null;
  /** 1 when someone proved the user controls `email` (a provider vouched, or an operator); 0 otherwise (docs/spec-gaps.md). */
  email_verified: number;
  created_at: number;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  etag: string;
  created_at: number;
  updated_at: number;
}

export interface MembershipsTable {
  workspace_id: string;
  user_id: string;
  role: Role;
  created_at: number;
}

export interface ExternalIdentitiesTable {
  subject: string;
  user_id: string;
  created_at: number;
}

/** A user's account at an OpenID provider: how single sign-on finds them again. */
export interface OidcIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  created_at: number;
}
