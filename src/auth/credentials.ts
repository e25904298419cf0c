import { crc32 } from 'node:zlib';
import { BASE62, base62, randomString, sha256Hex } from '../shared/crypto.js';

/** The three kinds of bearer credential the spec accepts, told apart by their shape alone. */
export type CredentialShape = { kind: 'api_token'; hash: string } | { kind: 'session'; hash: string } | { kind: 'jwt'; token: string } | { kind: 'malformed' };

export const API_TOKEN_PREFIX = 'sk_svc_';
/** The longest JWT `sub` accepted (and so the longest subject `wsp admin user link` takes). */
export const MAX_SUBJECT_LENGTH = 255;
/** A credential's last use is written at most once a minute (sessions, API tokens). */
export const TOUCH_INTERVAL_SECONDS = 60;
const API_TOKEN_BODY = 32;
const API_TOKEN_CHECKSUM = 6;
const SESSION_TOKEN_LENGTH = 32;
const SESSION_RE = /^[A-Za-z0-9]{32}$/;
const API_TOKEN_RE = /^sk_svc_[0-9A-Za-z]{38}$/;
const JWT_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function apiTokenChecksum(head: string): string {
  return base62(crc32(head), API_TOKEN_CHECKSUM);
}

/** `sk_svc_` + 32 random base62 + 6 base62 of the CRC32 of everything before. */
export function newApiToken(): string {
  const head = API_TOKEN_PREFIX + randomString(API_TOKEN_BODY, BASE62);
  return head + apiTokenChecksum(head);
}

export function hasValidChecksum(token: string): boolean {
  if (!API_TOKEN_RE.test(token)) return false;
  const head = token.slice(0, API_TOKEN_PREFIX.length + API_TOKEN_BODY);
  return apiTokenChecksum(head) === token.slice(head.length);
}

export function newSessionToken(): string {
  return randomString(SESSION_TOKEN_LENGTH, BASE62);
}

export const hashToken = (token: string): string => sha256Hex(token);

export function classifyCredential(token: string): CredentialShape {
  if (token.startsWith(API_TOKEN_PREFIX)) {
    // A token whose checksum is wrong is noise: rejected without touching the database.
    return hasValidChecksum(token) ? { kind: 'api_token', hash: hashToken(token) } : { kind: 'malformed' };
  }
  if (SESSION_RE.test(token)) return { kind: 'session', hash: hashToken(token) };
  if (token.length <= 8192 && JWT_RE.test(token)) return { kind: 'jwt', token };
  return { kind: 'malformed' };
}

/** The bearer credential of an Authorization header, or null when there is none usable. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  return m ? m[1]! : null;
}
