import { randomBytes } from 'node:crypto';
import { ApiError } from '../shared/errors.js';

export function newEtag(): string {
  return randomBytes(12).toString('base64url');
}

/** If-Match as sent: quoted or bare, an optional weak marker, or `*`. */
export function parseIfMatch(header: string): string {
  const v = header.trim();
  if (v === '*') return '*';
  const unweak = v.startsWith('W/') ? v.slice(2) : v;
  return unweak.length >= 2 && unweak.startsWith('"') && unweak.endsWith('"') ? unweak.slice(1, -1) : unweak;
}

export function etagMatches(ifMatch: string, current: string): boolean {
  const wanted = parseIfMatch(ifMatch);
  return wanted === '*' || wanted === current;
}

export function etagMismatch(current: string): ApiError {
  return new ApiError('ETAG_MISMATCH', { metadata: { current_etag: current } });
}

/** Throws the spec's 409 unless If-Match names the current version. */
export function assertIfMatch(ifMatch: string, current: string): void {
  if (!etagMatches(ifMatch, current)) throw etagMismatch(current);
}

export const quoteEtag = (etag: string) => `"${etag}"`;
