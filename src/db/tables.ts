/**
 * Row types of the foundation's tables, as stored. Booleans are 0/1 integers and JSON is
 * text so that one set of migrations serves SQLite and PostgreSQL.
 */
export interface SettingsTable {
  key: string;
  value: string;
}

export interface UsersTable {
  id: string;
  name: string | null;
  email: string | null;
  created_at: number;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  etag: string;
  created_at: number;
  updated_at: number;
}

export type Role = 'owner' | 'admin' | 'member';

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

export interface SessionsTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
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
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  principal_id: string;
  key: string;
  fingerprint: string;
  state: 'running' | 'done';
  status_code: number | null;
  response_body: string | null;
  response_headers: string | null;
  created_at: number;
  locked_until: number;
  expires_at: number;
}

export interface FoundationTables {
  settings: SettingsTable;
  users: UsersTable;
  workspaces: WorkspacesTable;
  memberships: MembershipsTable;
  external_identities: ExternalIdentitiesTable;
  sessions: SessionsTable;
  api_tokens: ApiTokensTable;
  idempotency_keys: IdempotencyKeysTable;
}

export interface JobsTable {
  id: string;
  kind: string;
  /** JSON */
  payload: string;
  state: 'queued' | 'running' | 'succeeded' | 'failed';
  attempts: number;
  max_attempts: number;
  /** Unix milliseconds: backoff needs finer steps than seconds. */
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  operation_id: string | null;
  dedupe_key: string | null;
  created_at: number;
  updated_at: number;
}

export interface OperationsTable {
  id: string;
  workspace_id: string;
  kind: string;
  done: number;
  /** JSON {code, message} when the operation failed */
  error: string | null;
  /** JSON object when it succeeded */
  result: string | null;
  created_at: number;
  updated_at: number;
}

export interface JobTables {
  jobs: JobsTable;
  operations: OperationsTable;
}

/** The whole database: each area adds its tables here. */
export interface DB extends FoundationTables, JobTables {}
