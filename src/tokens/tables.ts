/**
 * The tokens area's tables, as stored: API tokens. Each joins `DB` here, by declaration merging
 * (src/db/tables.ts says why); the area's modules import their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    api_tokens: ApiTokensTable;
  }
}

export interface ApiTokensTable {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  token_hash: string;
  expires_at: number | null;
  created_at: number;
  created_by: string;
  last_used_at: number | null;
  /** Space-separated scopes (docs/spec-gaps.md, "Token scopes"); null: all of them. */
  scopes: string | null;
}
