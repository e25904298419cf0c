import path from 'node:path';

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
  };
  /** WSP_MASTER_KEY: wraps secrets' data keys; unset: a 0600 key file in dataDir (src/secrets/master-key.ts). */
  masterKey: string | undefined;
  /** WSP_MASTER_KEY_PREVIOUS: older master keys still accepted for unwrapping, during a rotation. */
  masterKeyPrevious: string[];
  /** WSP_RATE_LIMIT_PER_MINUTE: requests per credential a minute; unset: no general limit. */
  rateLimitPerMinute: number | undefined;
  /** WSP_AUTH_FAILURES_PER_MINUTE: failed authentications per client address a minute (default 30). */
  authFailuresPerMinute: number;
  /** WSP_SHUTDOWN_GRACE_SECONDS: how long SIGTERM waits for in-flight requests and jobs (default 30). */
  shutdownGraceSeconds: number;
  bodyLimitBytes: number;
  /** OAuth client ids the device flow accepts: `wsp-cli` and those in WSP_OAUTH_CLIENT_IDS. */
  oauthClientIds: string[];
  /** The compute provider (CONTRACT §5); without a URL the embedded simulation is used. */
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
}

export class ConfigError extends Error {}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

function positiveIntFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const n = intFromEnv(env, name, fallback)!;
  if (n < 1) throw new ConfigError(`${name} must be at least 1, got ${n}`);
  return n;
}

function providerFromEnv(env: NodeJS.ProcessEnv): Config['provider'] {
  const id = env.WSP_PROVIDER_ID || 'hetzner';
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(id)) throw new ConfigError(`WSP_PROVIDER_ID must match [a-z][a-z0-9_-]{0,31}, got "${id}"`);
  const url = env.WSP_PROVIDER_URL || undefined;
  if (url && !/^https?:\/\//.test(url)) throw new ConfigError('WSP_PROVIDER_URL must be an http(s):// URL');
  const token = env.WSP_PROVIDER_TOKEN?.trim() || undefined;
  // The platform's account answers the catalog for every config and acts for every config without a secret_id.
  if (url && !token) throw new ConfigError("WSP_PROVIDER_URL needs WSP_PROVIDER_TOKEN (the platform's provider API token)");
  return {
    id,
    url,
    token,
    timeoutMs: positiveIntFromEnv(env, 'WSP_PROVIDER_TIMEOUT_SECONDS', 10) * 1000,
    actionPollMs: 1000,
  };
}

/** The built-in command-line client's id, always registered. */
export const CLI_CLIENT_ID = 'wsp-cli';

function oauthClientIdsFromEnv(env: NodeJS.ProcessEnv): string[] {
  const extra = (env.WSP_OAUTH_CLIENT_IDS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const id of extra) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new ConfigError(`WSP_OAUTH_CLIENT_IDS: "${id}" is not a client id ([A-Za-z0-9._-], 1-64 characters)`);
  }
  return [...new Set([CLI_CLIENT_ID, ...extra])];
}

/** A master key as text: padded standard base64 of exactly 32 bytes (`openssl rand -base64 32`). */
export const MASTER_KEY_TEXT = /^[A-Za-z0-9+/]{43}=$/;

function masterKeyFromEnv(value: string | undefined, name: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  // Never echo the value: it is key material.
  if (!MASTER_KEY_TEXT.test(value.trim())) throw new ConfigError(`${name} must be the base64 of exactly 32 random bytes (e.g. \`openssl rand -base64 32\`)`);
  return value.trim();
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFromEnv(env, 'PORT', 8080)!;
  const host = env.HOST || '0.0.0.0';
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  }
  // A JWT key without a required issuer and audience would accept tokens minted for any other service.
  if ((env.WSP_JWT_JWKS_URL || env.WSP_JWT_PUBLIC_KEY) && !(env.WSP_JWT_ISSUER && env.WSP_JWT_AUDIENCE)) {
    throw new ConfigError('WSP_JWT_ISSUER and WSP_JWT_AUDIENCE are required with WSP_JWT_JWKS_URL or WSP_JWT_PUBLIC_KEY');
  }
  return {
    port,
    host,
    dataDir: path.resolve(env.WSP_DATA_DIR || './data'),
    repoDir: env.WSP_REPO_DIR ? path.resolve(env.WSP_REPO_DIR) : undefined,
    databaseUrl,
    publicUrl: (env.WSP_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    logLevel: env.WSP_LOG_LEVEL || env.LOG_LEVEL || 'info',
    jwt: {
      jwksUrl: env.WSP_JWT_JWKS_URL || undefined,
      publicKey: env.WSP_JWT_PUBLIC_KEY || undefined,
      issuer: env.WSP_JWT_ISSUER || undefined,
      audience: env.WSP_JWT_AUDIENCE || undefined,
    },
    masterKey: masterKeyFromEnv(env.WSP_MASTER_KEY, 'WSP_MASTER_KEY'),
    masterKeyPrevious: (env.WSP_MASTER_KEY_PREVIOUS ?? '').split(',').map((s) => s.trim()).filter(Boolean).map((k) => masterKeyFromEnv(k, 'WSP_MASTER_KEY_PREVIOUS')!),
    rateLimitPerMinute: env.WSP_RATE_LIMIT_PER_MINUTE ? positiveIntFromEnv(env, 'WSP_RATE_LIMIT_PER_MINUTE', 1) : undefined,
    authFailuresPerMinute: positiveIntFromEnv(env, 'WSP_AUTH_FAILURES_PER_MINUTE', 30),
    shutdownGraceSeconds: positiveIntFromEnv(env, 'WSP_SHUTDOWN_GRACE_SECONDS', 30),
    bodyLimitBytes: 1024 * 1024,
    oauthClientIds: oauthClientIdsFromEnv(env),
    provider: providerFromEnv(env),
    suspensionRetentionDays: positiveIntFromEnv(env, 'WSP_SUSPENSION_RETENTION_DAYS', 30),
    schedulerIntervalSeconds: positiveIntFromEnv(env, 'WSP_SCHEDULER_INTERVAL_SECONDS', 60),
    jobLeaseSeconds: positiveIntFromEnv(env, 'WSP_JOB_LEASE_SECONDS', 60),
  };
}

/** The directory of installs' bare git repositories: WSP_REPO_DIR, or `repos` in the data directory. */
export function repoRoot(config: Pick<Config, 'dataDir' | 'repoDir'>): string {
  return config.repoDir ?? path.join(config.dataDir, 'repos');
}
