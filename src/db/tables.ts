import type { Generated } from 'kysely';

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
  /** The email lower-cased and trimmed: the sign-in key, unique; null for a user without one. */
  email_key: string | null;
  /** argon2id (PHC string); null: the user cannot sign in with a password. */
  password_hash: string | null;
  /** 1 when someone proved the user controls `email` (a provider vouched, or an operator); 0 otherwise (docs/spec-gaps.md). */
  email_verified: number;
  created_at: number;
}

/** A user's account at an OpenID provider: how single sign-on finds them again. */
export interface OidcIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  created_at: number;
}

/** A fixed-window counter (src/db/window-counter.ts): `failures` in the window that began at `window_start`. */
export interface WindowCounterTable {
  key: string;
  window_start: number;
  failures: number;
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

export interface AccountTables {
  oidc_identities: OidcIdentitiesTable;
  sign_in_limits: SignInLimitsTable;
  /** Requests per `c:<credential>` or `w:<workspace>` in the current minute (WSP_RATE_LIMIT_PER_MINUTE). */
  request_limits: WindowCounterTable;
  invitations: InvitationsTable;
  oidc_logins: OidcLoginsTable;
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
  /** Space-separated scopes (CONTRACT §12); null: all of them. */
  scopes: string | null;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  principal_id: string;
  key: string;
  fingerprint: string;
  state: 'running' | 'committed' | 'done' | 'lost';
  status_code: number | null;
  response_body: string | null;
  response_headers: string | null;
  created_at: number;
  locked_until: number;
  expires_at: number;
  /** The random token of the current claim: only its holder completes or releases it. */
  claim_token: string | null;
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
  list_versions: ListVersionsTable;
}

/** Bumped by triggers on every change of a versioned list's rows (migration 0018). */
export interface ListVersionsTable {
  /** `<table>:<owner id>` */
  list: string;
  version: number;
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
  /** Whom the job is done for (a webhook delivery's workspace): a pool's share is counted per group. */
  group_key: string | null;
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

export interface NotificationTables {
  notifications: NotificationsTable;
}

export interface PackagesTable {
  id: string;
  workspace_id: string;
  name: string;
  created_at: number;
}

export interface PackageVersionsTable {
  id: string;
  workspace_id: string;
  package_id: string;
  semver: string;
  /** JSON object: normalized path to Mustache template */
  files: string;
  created_at: number;
}

export interface InstallsTable {
  id: string;
  workspace_id: string;
  name: string;
  package_id: string;
  desired_version_id: string;
  current_version_id: string | null;
  /** JSON object */
  values_json: string;
  automatic_updates_enabled: number;
  /** The last render number given out for this install. */
  render_seq: number;
  /** The number of the render `current_version_id` came from (0: none yet). */
  current_render_seq: number;
  /** The repository's size on disk as last measured (after a render or a repository maintenance); null: not yet. */
  repository_bytes: number | null;
  etag: string;
  created_at: number;
  updated_at: number;
}

export type RenderState = 'queued' | 'running' | 'succeeded' | 'failed' | 'superseded';

export interface RendersTable {
  id: string;
  workspace_id: string;
  install_id: string;
  /** 1, 2, ... per install, in creation order: the order renders reach the branch. */
  seq: number;
  package_version_id: string;
  /** The values this render uses, fixed when it is created: their digest in `render_values`. */
  values_digest: string;
  state: RenderState;
  render_hash: string | null;
  tree_sha: string | null;
  commit_sha: string | null;
  operation_id: string;
  restored_from_render_id: string | null;
  message: string;
  created_at: number;
  updated_at: number;
}

/** Each distinct set of an install's values, once: renders name theirs by digest. */
export interface RenderValuesTable {
  install_id: string;
  /** SHA-256 (hex) of `values_json` as stored. */
  digest: string;
  values_json: string;
}

export interface InstallTables {
  packages: PackagesTable;
  package_versions: PackageVersionsTable;
  installs: InstallsTable;
  render_values: RenderValuesTable;
  renders: RendersTable;
}

export interface ClustersTable {
  id: string;
  workspace_id: string;
  name: string;
  is_default: number;
  created_at: number;
}

export interface ComputeConfigsTable {
  id: string;
  workspace_id: string;
  name: string;
  provider: string;
  region: string;
  image: string;
  machine_type_filter: string;
  secret_id: string | null;
  etag: string;
  created_at: number;
  updated_at: number;
}

export type MachineStatus = 'creating' | 'running' | 'suspending' | 'suspended' | 'resuming' | 'deleting' | 'failed' | 'expired';

export interface MachinesTable {
  id: string;
  workspace_id: string;
  compute_config_id: string;
  cluster_id: string;
  provider: string;
  hostname: string;
  server_type: string;
  location: string;
  image: string;
  status: MachineStatus;
  provider_server_id: number | null;
  ipv4: string | null;
  /** The snapshot of a suspension under way or in force. */
  snapshot_id: number | null;
  suspension_id: string | null;
  /** The operation of the latest asynchronous change (create, suspend, resume). */
  operation_id: string | null;
  /**
   * JSON `{code, message}` (its failure) while a job that gave up still puts things right at the
   * provider (src/compute/jobs/common.ts); null otherwise.
   */
  cleanup: string | null;
  etag: string;
  created_at: number;
  updated_at: number;
}

/** active: listed; resuming: a resume is under way; resumed and expired: over. */
/** `deleted`: its machine is being (or was) deleted; over, like resumed and expired. */
export type SuspensionState = 'active' | 'resuming' | 'resumed' | 'expired' | 'deleted';

export interface ComputeSuspensionsTable {
  id: string;
  workspace_id: string;
  machine_id: string;
  cluster_id: string;
  server_type: string;
  location: string;
  hostname: string;
  provider: string;
  snapshot_id: number;
  size_gb: number;
  monthly_cost_cents: number;
  reason: 'manual' | 'downgrade';
  state: SuspensionState;
  /** Expiry notices sent so far: 0 none, 1 the 7-day info, 2 the 1-day warning. */
  notices_sent: number;
  expires_at: number;
  created_at: number;
  ended_at: number | null;
}

export interface ComputeTables {
  clusters: ClustersTable;
  compute_configs: ComputeConfigsTable;
  machines: MachinesTable;
  compute_suspensions: ComputeSuspensionsTable;
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

export interface DeviceTables {
  device_authorizations: DeviceAuthorizationsTable;
  device_guess_limits: DeviceGuessLimitsTable;
}

export interface SecretsTable {
  id: string;
  workspace_id: string;
  name: string;
  etag: string;
  /** The last version number given out: versions are numbered 1, 2, ... per secret. */
  version_seq: number;
  /** The id of the master key that wrapped `wrapped_key` (see src/secrets/crypto.ts). */
  key_id: string;
  /** The secret's data key, AES-256-GCM sealed by that master key; never stored unwrapped. */
  wrapped_key: string;
  created_at: number;
  updated_at: number;
}

export type SecretVersionState = 'enabled' | 'disabled' | 'destroyed';

export interface SecretVersionsTable {
  id: string;
  workspace_id: string;
  secret_id: string;
  version_number: number;
  state: SecretVersionState;
  comment: string | null;
  etag: string;
  /** The payload sealed by the secret's data key; null once destroyed. */
  ciphertext: string | null;
  created_at: number;
  destroyed_at: number | null;
}

export interface SecretTables {
  secrets: SecretsTable;
  secret_versions: SecretVersionsTable;
}

export interface SnippetsTable {
  id: string;
  workspace_id: string;
  name: string;
  source: string;
  display_type: string | null;
  state: 'active' | 'archived';
  etag: string;
  created_at: number;
  updated_at: number;
}

/** A dashboard's head: its content is that of `current_revision_id`. */
export interface DashboardsTable {
  id: string;
  workspace_id: string;
  current_revision_id: string;
  etag: string;
  created_at: number;
  updated_at: number;
}

export type RevisionSource = 'manual' | 'automatic' | 'restore' | 'reset' | 'backfill';

/** Immutable (triggers refuse UPDATE, and DELETE while the dashboard exists). */
export interface DashboardRevisionsTable {
  id: string;
  workspace_id: string;
  dashboard_id: string;
  /** 1, 2, ... per dashboard. */
  seq: number;
  parent_revision_id: string | null;
  restored_from_revision_id: string | null;
  source: RevisionSource;
  author_id: string;
  summary: string | null;
  name: string;
  description: string | null;
  purpose: 'workspace_overview' | 'custom';
  /** JSON array */
  filter_definitions: string;
  /** JSON object */
  default_filter_values: string;
  /** JSON array */
  widgets: string;
  /** JSON object, or null for a first revision */
  structural_diff: string | null;
  created_at: number;
}

export interface DashboardTables {
  snippets: SnippetsTable;
  dashboards: DashboardsTable;
  dashboard_revisions: DashboardRevisionsTable;
}

/** The whole database: each area adds its tables here. */
/** CONTRACT §11: one row per write, secret access and sign-in (src/events). */
export interface EventsTable {
  id: string;
  workspace_id: string | null;
  type: string;
  actor_kind: string;
  actor_id: string | null;
  credential_id: string | null;
  resource_type: string;
  resource_id: string;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  created_at: number;
  /** JSON object: never a secret payload, a token or a password. */
  data: string;
}

export type WebhookState = 'enabled' | 'disabled';
export type DeliveryState = 'pending' | 'succeeded' | 'failed';

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** JSON array of event types and `<resource>.*` patterns. */
  event_types: string;
  secret_sealed: string;
  secret_key_id: string;
  state: WebhookState;
  disabled_reason: string | null;
  /** When its deliveries began failing without a success since; null while they succeed. */
  failing_since: number | null;
  /** Timeouts and connection failures in a row (src/webhooks/circuit.ts); 0 after any answer. */
  circuit_failures: number;
  /** While the circuit is open: until when its deliveries wait (Unix seconds); then one probe is sent. */
  circuit_open_until: number | null;
  etag: string;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  workspace_id: string;
  event_id: string;
  event_type: string;
  /** The JSON sent, fixed when the event is recorded. */
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** The events of a closed minute, by type (migration 0019): what the event series read. */
export interface EventCountsTable {
  workspace_id: string;
  /** Holds the events with `created_at` in (60·minute, 60·minute + 60]. */
  minute: number;
  type: string;
  resource_type: string;
  n: number;
}

/** The minutes of a workspace counted into event_counts: every one from first to last. */
export interface EventCountSpansTable {
  workspace_id: string;
  first_minute: number;
  last_minute: number;
}

export interface EventTables {
  events: EventsTable;
  event_counts: EventCountsTable;
  event_count_spans: EventCountSpansTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

export interface DB extends EventTables, AccountTables, FoundationTables, DashboardTables, JobTables, NotificationTables, InstallTables, ComputeTables, DeviceTables, SecretTables {}
