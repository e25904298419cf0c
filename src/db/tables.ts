/**
 * The database's tables, as stored. Booleans are 0/1 integers and JSON is text so that one set of
 * migrations serves SQLite and PostgreSQL.
 *
 * This file holds the machinery's own tables (settings, the rate limit's windows, idempotency
 * keys, list versions, jobs, the event log and its counts); every area declares its own in its
 * `src/<area>/tables.ts` and adds them to `DB` by declaration merging
 * (`declare module '../db/tables.js' { interface DB { ... } }`). So `Kysely<DB>` knows every table
 * wherever it is used, and the machinery, which imports no area (.dependency-cruiser.cjs), still
 * hands out and takes the whole database. Which modules may name which table in a query is
 * checked by test/architecture/tables.test.ts: an area its own, the machinery only these.
 */
export interface DB {
  settings: SettingsTable;
  /** Requests per `c:<credential>` or `w:<workspace>` in the current minute (WSP_RATE_LIMIT_PER_MINUTE). */
  request_limits: WindowCounterTable;
  idempotency_keys: IdempotencyKeysTable;
  list_versions: ListVersionsTable;
  jobs: JobsTable;
  events: EventsTable;
  event_counts: EventCountsTable;
  event_count_spans: EventCountSpansTable;
  event_prefix: EventPrefixTable;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** A fixed-window counter (src/db/window-counter.ts): `failures` in the window that began at `window_start`. */
export interface WindowCounterTable {
  key: string;
  window_start: number;
  failures: number;
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
  /** The job's turn among its kind's grouped jobs (start-time fair queueing, src/jobs/store.ts); 0 for a job of no group. */
  fair_key: number;
  created_at: number;
  updated_at: number;
}

/** docs/spec-gaps.md, "Events and the audit log": one row per write, secret access and sign-in (src/events). */
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

/** The events of a closed minute, by type (migration 0019): what the event series read. */
export interface EventCountsTable {
  workspace_id: string;
  /** Holds the events with `created_at` in (60·minute, 60·minute + 60]. */
  minute: number;
  type: string;
  resource_type: string;
  n: number;
}

/**
 * The events under a key (src/events/minute-counts.ts, `countKeysOf`) from the start of a counted
 * minute's day to its end, for each counted minute with events under it (migration 0031).
 */
export interface EventPrefixTable {
  workspace_id: string;
  key: string;
  minute: number;
  p: number;
}

/** The minutes of a workspace counted into event_counts: every one from first to last. */
export interface EventCountSpansTable {
  workspace_id: string;
  first_minute: number;
  last_minute: number;
}
