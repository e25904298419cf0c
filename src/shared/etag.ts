import { pooledRandom } from './random-pool.js';
import { ApiError } from './errors.js';

/**
 * Etags of the resources: a random `etag` column compared on every conditional write. These are
 * domain rules that services, jobs and operator commands share; quoting an ETag header is
 * HTTP's (src/http/etag.ts).
 */
export function newEtag(): string {
  return pooledRandom(12, (bytes, start) => bytes.toString('base64url', start, start + 12));
}

/** If-Match as sent: quoted or bare, an optional weak marker, or `*`. */
export function parseIfMatch(header: string): string {
  const v = header.trim();
  if (v === '*') return '*';
  const unweak = v.startsWith('W/') ? v.slice(2) : v;
  return unweak.length >= 2 && unweak.startsWith('"') && unweak.endsWith('"') ? unweak.slice(1, -1) : unweak;
}

/** The spec's 409 (7030) naming the etag to send instead (`metadata.current_etag`). */
export function etagMismatch(current: string): ApiError {
  return new ApiError('ETAG_MISMATCH', { metadata: { current_etag: current } });
}

/** Throws the spec's 409 unless If-Match names the current version (`*` names any). */
export function assertIfMatch(ifMatch: string, current: string): void {
  const wanted = parseIfMatch(ifMatch);
  if (wanted !== '*' && wanted !== current) throw etagMismatch(current);
}
