/** Node's codes for a connection that cannot be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EAI_AGAIN']);

/**
 * True when the database cannot be reached or is not answering now, rather than refusing this
 * query: a request meeting it can succeed later. PostgreSQL: no connection (refused, reset, lost,
 * the pool's connect timeout), a server shutting down or starting (SQLSTATE 57P01-57P03) and
 * connection exceptions (class 08). SQLite: the file locked past busy_timeout, I/O errors, a file
 * that cannot be opened. A full disk is not this: see isStorageFull.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  // Several addresses for one host name: Node reports each refusal inside an AggregateError.
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(isDatabaseUnavailable)) return true;
  const code = typeof e.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code)) return true;
  if (/^(57P0[1-3]|08[0-9A-Z]{3}|53300)$/.test(code)) return true;
  if (/^SQLITE_(BUSY|IOERR|CANTOPEN)/.test(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return !code && /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly)/.test(message);
}

/**
 * True when a write failed because the disk is full: SQLite's SQLITE_FULL, PostgreSQL's
 * disk_full (53100), or a file write's ENOSPC or EDQUOT. The database answers reads still, and
 * the write can succeed once space is freed: a 507, not the 503 of a database that is gone.
 */
export function isStorageFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (/^SQLITE_FULL/.test(code) || code === '53100' || code === 'ENOSPC' || code === 'EDQUOT');
}

/** Either of the above: the database cannot take this now and can later (retry, or answer "try again"). */
export function isTemporarilyRefused(err: unknown): boolean {
  return isDatabaseUnavailable(err) || isStorageFull(err);
}
