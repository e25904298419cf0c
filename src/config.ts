import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Type, type StaticDecode } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { PATTERN_WORDS, patterned } from './shared/pattern-schemas.js';
import type { SessionPolicy } from './sessions/service.js';
import type { RenderPoolOptions } from './installs/renders/render-pool.js';
import type { Quotas } from './quotas/limits.js';
import type { OidcSettings } from './accounts/oidc.js';
import type { StreamLimits } from './notifications/stream.js';

/** Every setting the server reads, taken from the environment once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Where installs' git repositories live; unset: `<dataDir>/repos` (see repoRoot). */
  repoDir: string | undefined;
  databaseUrl: string | undefined;
  publicUrl: string;
  logLevel: string;
  jwt: {
    jwksUrl: string | undefined;
    publicKey: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
    /** Unset: DEFAULT_JWT_MAX_LIFETIME_SECONDS (src/auth/jwt.ts). */
    maxLifetimeSeconds?: number;
  };
  /** WSP_MASTER_KEY (or the content of WSP_MASTER_KEY_FILE): wraps secrets' data keys; unset: a 0600 key file in dataDir (src/secrets/master-key.ts). */
  masterKey: string | undefined;
  /** WSP_MASTER_KEY_PREVIOUS: older master keys still accepted for unwrapping, during a rotation. */
  masterKeyPrevious: string[];
  /** WSP_RATE_LIMIT_PER_MINUTE: requests a minute per credential and per workspace, across instances; unset: no general limit. */
  rateLimitPerMinute: number | undefined;
  /** WSP_AUTH_FAILURES_PER_MINUTE: failed authentications per client address a minute (default 30). */
  authFailuresPerMinute: number;
  /** WSP_AUDIT_RETENTION_DAYS: events older than this are purged (default 365). */
  auditRetentionDays: number;
  /** WSP_SESSION_MAX_DAYS and WSP_SESSIONS_PER_USER_MAX (src/sessions/service.ts). */
  sessions: SessionPolicy;
  /** WSP_SHUTDOWN_GRACE_SECONDS: how long SIGTERM waits for in-flight requests and jobs (default 30). */
  shutdownGraceSeconds: number;
  /** WSP_STREAMS_PER_USER and WSP_STREAMS_PER_PROCESS: open notification streams this process serves (src/notifications/stream.ts). */
  streams: StreamLimits;
  /**
   * PostgreSQL's bounds (WSP_DB_CONNECT_TIMEOUT_SECONDS, WSP_DB_STATEMENT_TIMEOUT_SECONDS): a
   * request meeting a database that does not answer in time is a 503 (7054) with Retry-After.
   */
  database: { connectTimeoutMs: number; statementTimeoutMs: number; preparedStatements: boolean };
  bodyLimitBytes: number;
  /** How long a connection may take to send its request, how long it may sit idle, and between requests. */
  http: {
    requestTimeoutMs: number;
    /** The request line and headers alone: the slow-header attack ends well before a slow body would. */
    headersTimeoutMs: number;
    idleTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxHeaderBytes: number;
  };
  /** WSP_TRUST_PROXY: whose X-Forwarded-For names the client (Fastify's `trustProxy`); false: nobody's. */
  trustProxy: false | number | string[];
  /** OAuth client ids the device flow accepts: `wsp-cli` and those in WSP_OAUTH_CLIENT_IDS. */
  oauthClientIds: string[];
  /** The compute provider (docs/spec-gaps.md, "Compute"); without a URL the embedded simulation is used. */
  provider: {
    id: string;
    url: string | undefined;
    token: string | undefined;
    timeoutMs: number;
    /** Pause between polls of a provider action inside one job run. */
    actionPollMs: number;
  };
  suspensionRetentionDays: number;
  schedulerIntervalSeconds: number;
  /**
   * WSP_JOB_LEASE_SECONDS: how long a worker's claim on a job lasts without a heartbeat (default
   * 60); a job whose worker died is taken over by another worker once it has run out.
   */
  jobLeaseSeconds: number;
  /** Where templates are rendered: threads beside the event loop, each render bounded (src/installs/renders/render-pool.ts). */
  renders: RenderPoolOptions;
  /** Per-workspace quotas, WSP_QUOTA_* (src/quotas). */
  quotas: Quotas;
  /** WSP_REPOSITORY_GC_HOURS: how often installs' repositories are packed and pruned. */
  repositoryGcHours: number;
  /** Single sign-on (WSP_OIDC_*); null when it is off. */
  oidc: OidcSettings | null;
  /** WSP_WEBHOOKS_ALLOW_HTTP / _PRIVATE: webhook URLs may be plain http / reach private and loopback addresses (tests, private networks). */
  webhooks: { allowHttp: boolean; allowPrivate: boolean; retryDelaysSeconds: number[] };
  /**
   * The slots webhook deliveries have to themselves in each process (WSP_WEBHOOK_DELIVERY_CONCURRENCY),
   * and how many of them one workspace may hold (WSP_WEBHOOK_DELIVERIES_PER_WORKSPACE).
   */
  webhookDeliveries: { concurrency: number; perWorkspace: number };
}

export class ConfigError extends Error {}

/** The built-in command-line client's id, always registered. */
export const CLI_CLIENT_ID = 'wsp-cli';

/** A master key as text: padded standard base64 of exactly 32 bytes (`openssl rand -base64 32`). */
export const MASTER_KEY_TEXT = /^[A-Za-z0-9+/]{43}=$/;

const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;

// Each variable's schema: what it accepts, its default and its description, in one place. An
// empty variable counts as unset. Numbers arrive as text and are decoded once, here.
const text = (description: string, options: { pattern?: string; [PATTERN_WORDS]?: string; default?: string } = {}) => Type.Optional(Type.String({ description, ...options }));
const count = (description: string, byDefault: number | undefined, minimum: 0 | 1) =>
  Type.Optional(
    Type.Transform(Type.String({ description, pattern: minimum === 1 ? '^0*[1-9][0-9]*$' : '^[0-9]+$', ...(byDefault === undefined ? {} : { default: String(byDefault) }) }))
      .Decode((v) => Number(v))
      .Encode((n) => String(n)),
  );

/** The environment the server reads (also the list of its settings; README.md explains them). */
export const Environment = Type.Object({
  PORT: count('The HTTP port', 8080, 0),
  HOST: text('The address to listen on', { default: '0.0.0.0' }),
  WSP_DATA_DIR: text("The data directory: the SQLite database, the master key file, installs' repositories", { default: './data' }),
  WSP_REPO_DIR: text("Where installs' git repositories live; unset: <WSP_DATA_DIR>/repos"),
  DATABASE_URL: text('PostgreSQL (postgres://...); unset: SQLite in WSP_DATA_DIR', patterned('^postgres(ql)?://', 'a postgres:// URL', 'postgres://wsp@db.internal:5432/wsp')),
  WSP_PUBLIC_URL: text('The URL clients reach the server at (device flow links); unset: http://localhost:<PORT>'),
  WSP_LOG_LEVEL: text('pino log level (also LOG_LEVEL)'),
  LOG_LEVEL: text('pino log level, when WSP_LOG_LEVEL is unset', { default: 'info' }),
  WSP_JWT_JWKS_URL: text('JWKS of the identity provider whose JWTs are accepted'),
  WSP_JWT_PUBLIC_KEY: text('A PEM public key whose JWTs are accepted (instead of a JWKS)'),
  WSP_JWT_ISSUER: text('The iss every accepted JWT must carry (required with a JWT key)'),
  WSP_JWT_AUDIENCE: text('The aud every accepted JWT must carry (required with a JWT key)'),
  WSP_JWT_MAX_LIFETIME_SECONDS: count('The longest a JWT may live (exp - iat) and the oldest it may be (now - iat)', 86400, 1),
  WSP_MASTER_KEY: text("Wraps secrets' data keys: base64 of 32 bytes; unset: a 0600 key file in WSP_DATA_DIR"),
  WSP_MASTER_KEY_FILE: text('A file holding WSP_MASTER_KEY (a container secret such as /run/secrets/wsp_master_key); not with WSP_MASTER_KEY'),
  WSP_MASTER_KEY_PREVIOUS: text('Older master keys still accepted for unwrapping during a rotation, comma-separated'),
  WSP_RATE_LIMIT_PER_MINUTE: count('Requests a minute per credential and per workspace, shared by every server instance; unset: no general limit', undefined, 1),
  WSP_AUTH_FAILURES_PER_MINUTE: count('Failed authentications per client address a minute', 30, 1),
  WSP_AUDIT_RETENTION_DAYS: count('Days the audit log keeps an event; older ones are purged hourly', 365, 1),
  WSP_REQUEST_TIMEOUT_SECONDS: count('How long a client may take to send a whole request (headers and body); then 408 and the connection closes', 30, 1),
  WSP_IDLE_TIMEOUT_SECONDS: count('How long a connection may pass no data either way (a client that stops reading an answer included) before it is closed', 120, 1),
  WSP_KEEP_ALIVE_TIMEOUT_SECONDS: count('How long an idle keep-alive connection is kept open between requests', 72, 1),
  WSP_TRUST_PROXY: text(
    'Reverse proxies whose X-Forwarded-For names the client: a hop count, or a comma-separated list of addresses and CIDR ranges (also loopback, linklocal, uniquelocal); unset: none, the peer address is the client',
    patterned(
      '^ *([0-9]+|[0-9A-Za-z.:/]+( *, *[0-9A-Za-z.:/]+)*) *$',
      'a hop count such as 1, or a comma-separated list of addresses and CIDR ranges such as 10.0.0.0/8, loopback',
      '10.0.0.0/8, loopback',
    ),
  ),
  WSP_SESSION_MAX_DAYS: count('The longest a session lives from its creation, however often it is used (idle sessions end after 30 days)', 90, 1),
  WSP_SESSIONS_PER_USER_MAX: count("Sessions one user may hold; a new one beyond ends the user's least recently used", 100, 1),
  WSP_SHUTDOWN_GRACE_SECONDS: count('How long SIGTERM waits for in-flight requests and jobs', 30, 1),
  WSP_STREAMS_PER_USER: count('Live notification streams one user may hold open on one server process; one more is refused (429)', 10, 1),
  WSP_STREAMS_PER_PROCESS: count('Live notification streams one server process serves at once; one more is refused (429)', 1000, 1),
  WSP_DB_CONNECT_TIMEOUT_SECONDS: count('PostgreSQL: the longest a request waits for a database connection (a full pool or a new connection); then 503', 10, 1),
  WSP_DB_PREPARED_STATEMENTS: text(
    "PostgreSQL: true: the statements every request runs are prepared once per connection; false: parsed at every call, for a pooler that moves a session's statements between connections (PgBouncer in transaction mode before 1.21)",
    { ...patterned('^(true|false)$', 'true or false', 'false'), default: 'true' },
  ),
  WSP_DB_STATEMENT_TIMEOUT_SECONDS: count('PostgreSQL: the longest one statement may go unanswered; then its connection is closed and the request answers 503 (migrations are exempt)', 15, 1),
  WSP_OAUTH_CLIENT_IDS: text('OAuth client ids the device flow accepts besides wsp-cli, comma-separated'),
  WSP_PROVIDER_ID: text('The compute provider id', {
    ...patterned('^[a-z][a-z0-9_-]{0,31}$', 'a provider id such as hetzner: a lower-case letter, then up to 31 of a-z, 0-9, _ and -', 'hetzner'),
    default: 'hetzner',
  }),
  WSP_PROVIDER_URL: text("The provider's API; unset: the embedded simulation", patterned('^https?://', 'an http(s):// URL', 'https://api.hetzner.cloud/v1')),
  WSP_PROVIDER_TOKEN: text("The platform's provider API token (required with WSP_PROVIDER_URL)"),
  WSP_PROVIDER_TIMEOUT_SECONDS: count('Timeout of one provider request', 10, 1),
  WSP_SUSPENSION_RETENTION_DAYS: count("How long a suspended machine's snapshot is kept", 30, 1),
  WSP_SCHEDULER_INTERVAL_SECONDS: count('How often the compute expiry scan runs', 60, 1),
  WSP_JOB_LEASE_SECONDS: count("How long a worker's claim on a job lasts without a heartbeat", 60, 1),
  WSP_RENDER_THREADS: count('Threads that render templates, per server or worker process', 2, 1),
  WSP_RENDERS_PER_WORKSPACE: count("A workspace's renders under way at once, per process; more wait their turn", 2, 1),
  WSP_RENDER_TIMEOUT_SECONDS: count('The longest one render may run on its thread; then it fails', 10, 1),
  WSP_RENDER_MEMORY_MB: count("A render thread's heap; a render that needs more fails", 256, 1),
  WSP_RENDER_NICE: Type.Optional(
    Type.Transform(
      Type.String({
        description: "Render threads' nice value (0-19; Linux): how far below requests they stand for the cores. 0 leaves them at the process's",
        pattern: '^(0|[1-9]|1[0-9])$',
        default: '10',
      }),
    )
      .Decode((v) => Number(v))
      .Encode((n) => String(n)),
  ),
  WSP_QUOTA_RENDER_OUTPUT_BYTES: count("The most one render's files may hold together, in bytes", 8 * 1024 * 1024, 1),
  WSP_QUOTA_REPOSITORY_BYTES: count("The most one install's git repository may hold on disk, in bytes", 256 * 1024 * 1024, 1),
  WSP_QUOTA_RENDERS_PER_HOUR: count('Renders a workspace may start in an hour (creating or updating installs)', 600, 1),
  WSP_QUOTA_API_TOKENS: count('API tokens a workspace may hold at once (not revoked, not expired)', 100, 1),
  WSP_QUOTA_WEBHOOKS: count('Webhook endpoints a workspace may have', 20, 1),
  WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES: count("The most all of a workspace's install repositories may take on disk together, in bytes", 2 * 1024 * 1024 * 1024, 1),
  WSP_WORKSPACES_PER_USER: count('Workspaces one user may own; creating one more is refused (409) until they hand one over or leave it', 10, 1),
  WSP_WEBHOOK_RETRY_DELAYS_SECONDS: text('The waits before each retry of a failed webhook delivery, in seconds, comma-separated', {
    ...patterned('^ *[0-9]{1,7}( *, *[0-9]{1,7}){0,19} *$', 'up to 20 comma-separated whole numbers of seconds', '60, 300, 1800'),
    default: '5,300,1800,7200,18000,36000,36000',
  }),
  WSP_WEBHOOK_DELIVERY_CONCURRENCY: count('Webhook deliveries sent at once, per server or worker process, in slots of their own: renders, machine jobs and periodic work never wait for them', 8, 1),
  WSP_WEBHOOK_DELIVERIES_PER_WORKSPACE: count(
    "One workspace's webhook deliveries sent at once, per process (at most WSP_WEBHOOK_DELIVERY_CONCURRENCY); unset: a quarter of WSP_WEBHOOK_DELIVERY_CONCURRENCY, at least 1",
    undefined,
    1,
  ),
  WSP_WEBHOOKS_ALLOW_HTTP: text('true: webhook URLs may be plain http (otherwise https only)', { ...patterned('^(true|false)$', 'true or false', 'false'), default: 'false' }),
  WSP_WEBHOOKS_ALLOW_PRIVATE: text('true: webhook URLs may reach private, loopback and link-local addresses (otherwise refused, also when a DNS name resolves to one)', {
    ...patterned('^(true|false)$', 'true or false', 'false'),
    default: 'false',
  }),
  WSP_REPOSITORY_GC_HOURS: count("How often installs' git repositories are packed and pruned", 24, 1),
  WSP_OIDC_ISSUER: text(
    'The OpenID provider for single sign-on (https; http only on loopback); unset: single sign-on is off',
    patterned('^https?://', 'an https:// URL (http:// only on loopback)', 'https://id.example.com'),
  ),
  WSP_OIDC_CLIENT_ID: text("The platform's client id at the OpenID provider"),
  WSP_OIDC_CLIENT_SECRET: text("The platform's client secret at the OpenID provider"),
  WSP_OIDC_AUTO_CREATE: text('true: a person the OpenID provider vouches for becomes a user even without an invitation', {
    ...patterned('^(true|false)$', 'true or false', 'false'),
    default: 'false',
  }),
});

/** What a variable that does not match its schema is told (never its value when it is key material). */
function refusal(name: string, raw: string): string {
  const schema = Environment.properties[name as keyof typeof Environment.properties] as { pattern?: string } | undefined;
  switch (name) {
    case 'DATABASE_URL':
      return 'DATABASE_URL must be a postgres:// URL';
    case 'WSP_PROVIDER_URL':
      return 'WSP_PROVIDER_URL must be an http(s):// URL';
    case 'WSP_MASTER_KEY':
    case 'WSP_MASTER_KEY_PREVIOUS':
      return `${name} must be the base64 of exactly 32 random bytes (e.g. \`openssl rand -base64 32\`)`;
  }
  if (schema?.pattern === '^[0-9]+$' || (schema?.pattern === '^0*[1-9][0-9]*$' && !/^[0-9]+$/.test(raw))) return `${name} must be a non-negative integer, got "${raw}"`;
  if (schema?.pattern === '^0*[1-9][0-9]*$') return `${name} must be at least 1, got ${Number(raw)}`;
  const words = (schema as Record<string, unknown> | undefined)?.[PATTERN_WORDS];
  return `${name} must be ${typeof words === 'string' ? words : 'in the form its description in README.md gives'}, got "${raw.slice(0, 64)}"`;
}

/** The environment's variables of the schema that are set and not empty, keys and tokens trimmed. */
function present(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(Environment.properties)) {
    let value = env[name];
    if (name === 'WSP_MASTER_KEY' || name === 'WSP_PROVIDER_TOKEN' || name === 'WSP_OIDC_CLIENT_SECRET') value = value?.trim();
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

function decodeEnvironment(env: NodeJS.ProcessEnv): StaticDecode<typeof Environment> {
  const given = present(env);
  if (given.WSP_MASTER_KEY !== undefined && !MASTER_KEY_TEXT.test(given.WSP_MASTER_KEY)) throw new ConfigError(refusal('WSP_MASTER_KEY', ''));
  const withDefaults = Value.Default(Environment, given);
  const first = Value.Errors(Environment, withDefaults).First();
  if (first) {
    const name = first.path.split('/')[1] ?? first.path;
    throw new ConfigError(refusal(name, String(given[name] ?? '')));
  }
  return Value.Decode<typeof Environment>(Environment, withDefaults);
}

/** A render thread's heap per byte of output its quota allows (UTF-16 text, then UTF-8 bytes, then a copy sent back). */
const RENDER_MEMORY_PER_OUTPUT_BYTE = 8;

/** Request line and headers; the 431 answer's message states the same figure. */
export const MAX_HEADER_BYTES = 16 * 1024;
const HEADERS_TIMEOUT_SECONDS = 10;
const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** A hop count, or addresses and CIDR ranges each checked here rather than at the first request. */
function parseTrustProxy(value: string | undefined): Config['trustProxy'] {
  if (value === undefined) return false;
  if (/^ *[0-9]+ *$/.test(value)) {
    const hops = Number(value);
    if (hops < 1) throw new ConfigError('WSP_TRUST_PROXY must be a hop count of at least 1, or addresses and CIDR ranges');
    return hops;
  }
  const items = list(value);
  for (const item of items) {
    if (PROXY_KEYWORDS.has(item)) continue;
    const [address, prefix, ...rest] = item.split('/');
    const family = net.isIP(address ?? '');
    const maxPrefix = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (family === 0 || rest.length > 0 || !prefixOk) throw new ConfigError(`WSP_TRUST_PROXY: "${item.slice(0, 64)}" is not an address, a CIDR range or loopback/linklocal/uniquelocal`);
  }
  return items;
}

/** A comma-separated list, each item trimmed, empty ones dropped. */
const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = decodeEnvironment(env);
  // A JWT key without a required issuer and audience would accept tokens minted for any other service.
  if ((e.WSP_JWT_JWKS_URL || e.WSP_JWT_PUBLIC_KEY) && !(e.WSP_JWT_ISSUER && e.WSP_JWT_AUDIENCE)) {
    throw new ConfigError('WSP_JWT_ISSUER and WSP_JWT_AUDIENCE are required with WSP_JWT_JWKS_URL or WSP_JWT_PUBLIC_KEY');
  }
  // The platform's account answers the catalog for every config and acts for every config without a secret_id.
  if (e.WSP_PROVIDER_URL && !e.WSP_PROVIDER_TOKEN) throw new ConfigError("WSP_PROVIDER_URL needs WSP_PROVIDER_TOKEN (the platform's provider API token)");
  // A render holds its output as a string and then as bytes, beside its values: a heap smaller
  // than that would stop renders the quota allows (and bytes outside the heap are not bounded by it).
  if (e.WSP_RENDER_MEMORY_MB! * 1024 * 1024 < RENDER_MEMORY_PER_OUTPUT_BYTE * e.WSP_QUOTA_RENDER_OUTPUT_BYTES!) {
    throw new ConfigError(
      `WSP_RENDER_MEMORY_MB must be at least ${Math.ceil((RENDER_MEMORY_PER_OUTPUT_BYTE * e.WSP_QUOTA_RENDER_OUTPUT_BYTES!) / 1024 / 1024)} with WSP_QUOTA_RENDER_OUTPUT_BYTES=${e.WSP_QUOTA_RENDER_OUTPUT_BYTES}`,
    );
  }
  const oidc = oidcSettings(e);
  const masterKey = masterKeyOf(e);
  const previous = list(e.WSP_MASTER_KEY_PREVIOUS);
  // Never echo a key: it is key material.
  if (previous.some((k) => !MASTER_KEY_TEXT.test(k))) throw new ConfigError(refusal('WSP_MASTER_KEY_PREVIOUS', ''));
  const clientIds = list(e.WSP_OAUTH_CLIENT_IDS);
  const badClient = clientIds.find((id) => !CLIENT_ID.test(id));
  if (badClient !== undefined) throw new ConfigError(`WSP_OAUTH_CLIENT_IDS: "${badClient}" is not a client id ([A-Za-z0-9._-], 1-64 characters)`);
  const port = e.PORT!;
  return {
    port,
    host: e.HOST!,
    dataDir: path.resolve(e.WSP_DATA_DIR!),
    repoDir: e.WSP_REPO_DIR ? path.resolve(e.WSP_REPO_DIR) : undefined,
    databaseUrl: e.DATABASE_URL,
    publicUrl: (e.WSP_PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    logLevel: e.WSP_LOG_LEVEL ?? e.LOG_LEVEL!,
    jwt: { jwksUrl: e.WSP_JWT_JWKS_URL, publicKey: e.WSP_JWT_PUBLIC_KEY, issuer: e.WSP_JWT_ISSUER, audience: e.WSP_JWT_AUDIENCE, maxLifetimeSeconds: e.WSP_JWT_MAX_LIFETIME_SECONDS! },
    masterKey,
    masterKeyPrevious: previous,
    rateLimitPerMinute: e.WSP_RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: e.WSP_AUTH_FAILURES_PER_MINUTE!,
    auditRetentionDays: e.WSP_AUDIT_RETENTION_DAYS!,
    shutdownGraceSeconds: e.WSP_SHUTDOWN_GRACE_SECONDS!,
    streams: { perUser: e.WSP_STREAMS_PER_USER!, perProcess: e.WSP_STREAMS_PER_PROCESS! },
    database: {
      connectTimeoutMs: e.WSP_DB_CONNECT_TIMEOUT_SECONDS! * 1000,
      statementTimeoutMs: e.WSP_DB_STATEMENT_TIMEOUT_SECONDS! * 1000,
      preparedStatements: e.WSP_DB_PREPARED_STATEMENTS === 'true',
    },
    sessions: { maxSeconds: e.WSP_SESSION_MAX_DAYS! * 86_400, perUser: e.WSP_SESSIONS_PER_USER_MAX! },
    bodyLimitBytes: 1024 * 1024,
    http: {
      requestTimeoutMs: e.WSP_REQUEST_TIMEOUT_SECONDS! * 1000,
      headersTimeoutMs: Math.min(e.WSP_REQUEST_TIMEOUT_SECONDS!, HEADERS_TIMEOUT_SECONDS) * 1000,
      idleTimeoutMs: e.WSP_IDLE_TIMEOUT_SECONDS! * 1000,
      keepAliveTimeoutMs: e.WSP_KEEP_ALIVE_TIMEOUT_SECONDS! * 1000,
      maxHeaderBytes: MAX_HEADER_BYTES,
    },
    trustProxy: parseTrustProxy(e.WSP_TRUST_PROXY),
    oauthClientIds: [...new Set([CLI_CLIENT_ID, ...clientIds])],
    provider: {
      id: e.WSP_PROVIDER_ID!,
      url: e.WSP_PROVIDER_URL,
      token: e.WSP_PROVIDER_TOKEN,
      timeoutMs: e.WSP_PROVIDER_TIMEOUT_SECONDS! * 1000,
      actionPollMs: 1000,
    },
    suspensionRetentionDays: e.WSP_SUSPENSION_RETENTION_DAYS!,
    schedulerIntervalSeconds: e.WSP_SCHEDULER_INTERVAL_SECONDS!,
    jobLeaseSeconds: e.WSP_JOB_LEASE_SECONDS!,
    renders: {
      threads: e.WSP_RENDER_THREADS!,
      perWorkspace: e.WSP_RENDERS_PER_WORKSPACE!,
      timeoutMs: e.WSP_RENDER_TIMEOUT_SECONDS! * 1000,
      memoryMb: e.WSP_RENDER_MEMORY_MB!,
      nice: e.WSP_RENDER_NICE!,
    },
    quotas: {
      renderOutputBytes: e.WSP_QUOTA_RENDER_OUTPUT_BYTES!,
      repositoryBytes: e.WSP_QUOTA_REPOSITORY_BYTES!,
      rendersPerHour: e.WSP_QUOTA_RENDERS_PER_HOUR!,
      apiTokens: e.WSP_QUOTA_API_TOKENS!,
      webhooks: e.WSP_QUOTA_WEBHOOKS!,
      workspaceRepositoryBytes: e.WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES!,
      workspacesPerUser: e.WSP_WORKSPACES_PER_USER!,
    },
    repositoryGcHours: e.WSP_REPOSITORY_GC_HOURS!,
    oidc,
    webhooks: {
      allowHttp: e.WSP_WEBHOOKS_ALLOW_HTTP === 'true',
      allowPrivate: e.WSP_WEBHOOKS_ALLOW_PRIVATE === 'true',
      retryDelaysSeconds: e.WSP_WEBHOOK_RETRY_DELAYS_SECONDS!.split(',').map((x) => Number(x.trim())),
    },
    webhookDeliveries: {
      concurrency: e.WSP_WEBHOOK_DELIVERY_CONCURRENCY!,
      // A share larger than the pool is the whole pool.
      perWorkspace: Math.min(e.WSP_WEBHOOK_DELIVERY_CONCURRENCY!, e.WSP_WEBHOOK_DELIVERIES_PER_WORKSPACE ?? Math.max(1, Math.floor(e.WSP_WEBHOOK_DELIVERY_CONCURRENCY! / 4))),
    },
  };
}

/**
 * WSP_MASTER_KEY, or the content of WSP_MASTER_KEY_FILE: an orchestrator's secret is a file
 * (Compose and Kubernetes mount it under /run/secrets), and the key then never appears in the
 * container's environment. From there on the two are one setting: the key the operator gives.
 * The file's mode is not checked as master.key's is: the orchestrator owns it, and a secret
 * mounted from a host file keeps that file's owner, which the server's user often is not.
 */
function masterKeyOf(e: StaticDecode<typeof Environment>): string | undefined {
  if (e.WSP_MASTER_KEY_FILE === undefined) return e.WSP_MASTER_KEY;
  if (e.WSP_MASTER_KEY !== undefined) throw new ConfigError('WSP_MASTER_KEY and WSP_MASTER_KEY_FILE are both set: give the key one way');
  let text: string;
  try {
    text = fs.readFileSync(e.WSP_MASTER_KEY_FILE, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(`WSP_MASTER_KEY_FILE: ${e.WSP_MASTER_KEY_FILE} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  // Never echo a key: it is key material.
  if (!MASTER_KEY_TEXT.test(text)) throw new ConfigError(`WSP_MASTER_KEY_FILE: ${e.WSP_MASTER_KEY_FILE} must hold the base64 of exactly 32 random bytes (e.g. \`openssl rand -base64 32\`)`);
  return text;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** WSP_OIDC_*: all three or none; a provider reached over plain http only on this machine. */
function oidcSettings(e: StaticDecode<typeof Environment>): OidcSettings | null {
  const given = [e.WSP_OIDC_ISSUER, e.WSP_OIDC_CLIENT_ID, e.WSP_OIDC_CLIENT_SECRET];
  if (given.every((v) => v === undefined)) return null;
  if (given.some((v) => v === undefined)) throw new ConfigError('WSP_OIDC_ISSUER, WSP_OIDC_CLIENT_ID and WSP_OIDC_CLIENT_SECRET are set together (single sign-on needs all three)');
  const issuer = new URL(e.WSP_OIDC_ISSUER!);
  if (issuer.protocol === 'http:' && !LOOPBACK.has(issuer.hostname)) throw new ConfigError('WSP_OIDC_ISSUER must be an https:// URL (plain http only for a provider on this machine)');
  return { issuer: e.WSP_OIDC_ISSUER!.replace(/\/+$/, ''), clientId: e.WSP_OIDC_CLIENT_ID!, clientSecret: e.WSP_OIDC_CLIENT_SECRET!, autoCreate: e.WSP_OIDC_AUTO_CREATE === 'true' };
}

/** The directory of installs' bare git repositories: WSP_REPO_DIR, or `repos` in the data directory. */
export function repoRoot(config: Pick<Config, 'dataDir' | 'repoDir'>): string {
  return config.repoDir ?? path.join(config.dataDir, 'repos');
}
