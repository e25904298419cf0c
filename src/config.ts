import path from 'node:path';

/** Every setting the server reads, taken from the environment once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  publicUrl: string;
  logLevel: string;
  jwt: {
    jwksUrl: string | undefined;
    publicKey: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
  };
  masterKey: string | undefined;
  rateLimitPerMinute: number | undefined;
  bodyLimitBytes: number;
}

export class ConfigError extends Error {}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFromEnv(env, 'PORT', 8080)!;
  const host = env.HOST || '0.0.0.0';
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  }
  return {
    port,
    host,
    dataDir: path.resolve(env.WSP_DATA_DIR || './data'),
    databaseUrl,
    publicUrl: (env.WSP_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    logLevel: env.WSP_LOG_LEVEL || env.LOG_LEVEL || 'info',
    jwt: {
      jwksUrl: env.WSP_JWT_JWKS_URL || undefined,
      publicKey: env.WSP_JWT_PUBLIC_KEY || undefined,
      issuer: env.WSP_JWT_ISSUER || undefined,
      audience: env.WSP_JWT_AUDIENCE || undefined,
    },
    masterKey: env.WSP_MASTER_KEY || undefined,
    rateLimitPerMinute: intFromEnv(env, 'WSP_RATE_LIMIT_PER_MINUTE', undefined),
    bodyLimitBytes: 1024 * 1024,
  };
}
