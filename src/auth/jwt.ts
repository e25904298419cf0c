import { createPublicKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, importJWK, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { systemClock, type Clock } from '../shared/clock.js';

export interface JwtSettings {
  jwksUrl?: string | undefined;
  publicKey?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
  /** The longest a JWT may live (exp - iat) and the oldest it may be (now - iat), in seconds. */
  maxLifetimeSeconds?: number | undefined;
}

/** 24 hours: an access token from an identity provider lives minutes to hours, never days. */
export const DEFAULT_JWT_MAX_LIFETIME_SECONDS = 86_400;

export type JwtVerifier = (token: string) => Promise<JWTPayload | null>;

const ACCEPTED = ['ES256', 'RS256'];

function algorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  throw new Error('WSP_JWT_PUBLIC_KEY must be an EC P-256 or RSA public key');
}

/**
 * Verifies JWTs against one configured key (SPKI PEM or JWK) or a JWKS URL. Only ES256 and
 * RS256 are accepted, and with a single key only the algorithm that key is for, so
 * `alg: none` and algorithm confusion (an HMAC signed with the public key) fail.
 * `exp` and `iat` are required: a token without an end, or minted for longer than
 * `maxLifetimeSeconds` (or older than that, or issued in the future), is refused, so a leaked
 * token is good for a bounded time. `exp`, `nbf` and `iat` are judged by `clock` (the app's
 * injected clock).
 */
export async function createJwtVerifier(settings: JwtSettings, clock: Clock = systemClock): Promise<JwtVerifier> {
  let key: KeyObject | Uint8Array | JWTVerifyGetKey;
  let algorithms: string[];
  if ((settings.jwksUrl || settings.publicKey) && !(settings.issuer && settings.audience)) {
    throw new Error('WSP_JWT_ISSUER and WSP_JWT_AUDIENCE are required with a JWT key');
  }
  if (settings.jwksUrl) {
    key = createRemoteJWKSet(new URL(settings.jwksUrl));
    algorithms = ACCEPTED;
  } else if (settings.publicKey) {
    // A PEM given on one line of an environment file has its newlines written as \n.
    const raw = settings.publicKey.trim().replace(/\\n/g, '\n');
    if (raw.startsWith('{')) {
      const jwk = JSON.parse(raw) as { kty?: string; crv?: string; alg?: string; d?: string };
      const alg = jwk.kty === 'EC' && jwk.crv === 'P-256' ? 'ES256' : jwk.kty === 'RSA' ? 'RS256' : null;
      if (!alg) throw new Error('WSP_JWT_PUBLIC_KEY JWK must be EC P-256 or RSA');
      if (jwk.d !== undefined) throw new Error('WSP_JWT_PUBLIC_KEY must be a public key, not a private one');
      key = (await importJWK(jwk, alg)) as KeyObject | Uint8Array;
      algorithms = [alg];
    } else {
      const k = createPublicKey(raw);
      algorithms = [algorithmOf(k)];
      key = k;
    }
  } else {
    return async () => null;
  }
  const maxLifetime = settings.maxLifetimeSeconds ?? DEFAULT_JWT_MAX_LIFETIME_SECONDS;
  const base = {
    algorithms,
    requiredClaims: ['exp', 'iat'],
    maxTokenAge: maxLifetime,
    ...(settings.issuer ? { issuer: settings.issuer } : {}),
    ...(settings.audience ? { audience: settings.audience } : {}),
  };
  return async (token) => {
    const options = { ...base, currentDate: new Date(clock.nowMs()) };
    try {
      const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
      // jose bounds the age (maxTokenAge, from iat) and the end (exp); the span between is ours.
      if (payload.exp! - payload.iat! > maxLifetime) return null;
      return payload;
    } catch {
      return null;
    }
  };
}
