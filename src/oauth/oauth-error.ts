import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { validationEntries } from '../http/validation.js';
import { ApiError } from '../shared/errors.js';
import { isTemporarilyRefused } from '../db/unavailable.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../http/pipeline.js';
import { DEVICE_CODE_GRANT, type OAuthErrorCode } from './schemas.js';

/** An RFC 6749 §5.2 error: answered as 400 JSON `{error, error_description}`, never the envelope. */
export class OAuthError extends Error {
  readonly description: string;
  constructor(
    readonly error: OAuthErrorCode,
    description: string,
    /** Not 400: a rate limit's 429, with the seconds to wait (RFC 6749 defines no status for it). */
    readonly limited?: { retryAfterSeconds: number },
  ) {
    // RFC 6749 §5.2: error_description holds only %x20-21 / %x23-5B / %x5D-7E (no `"`, no `\`,
    // nothing outside printable ASCII), whatever a message quotes from the request.
    const clean = description
      .replace(/"/g, "'")
      .replace(/\\/g, '/')
      .replace(/[^\x20-\x7e]/g, '?');
    super(clean);
    this.description = clean;
  }
}

/**
 * Maps what Fastify throws before the handler runs (bad JSON, a wrong content type, a body
 * failing the schema) to OAuth's `invalid_request`; a well-formed request naming a grant
 * type other than the device code is `unsupported_grant_type` whatever else it lacks.
 */
function fromFastify(err: FastifyError, request: FastifyRequest, checksGrantType: boolean): OAuthError | null {
  const validation = (err as FastifyError & { validation?: unknown }).validation;
  if (validation) {
    const grant = (request.body as { grant_type?: unknown } | null | undefined)?.grant_type;
    if (checksGrantType && typeof grant === 'string' && grant !== DEVICE_CODE_GRANT) {
      return new OAuthError('unsupported_grant_type', `grant_type must be ${DEVICE_CODE_GRANT}`);
    }
    const entries = validationEntries(validation as never, (err as FastifyError & { validationContext?: string }).validationContext ?? 'body');
    return new OAuthError('invalid_request', entries.map((e) => e.message).join('; '));
  }
  // What the app's own body parsing refuses (malformed JSON, a poisoned key: ApiError 4xx).
  if (err instanceof ApiError && err.status >= 400 && err.status < 500) return new OAuthError('invalid_request', err.message);
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    const why =
      err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'The body must be application/x-www-form-urlencoded or application/json'
        : err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'The body is larger than 1 MiB'
          : 'The request body could not be read';
    return new OAuthError('invalid_request', why);
  }
  return null;
}

/** Sends an OAuth response (success or error): never cached, as RFC 6749 §5.1 requires. */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** The route-level error handler of an OAuth endpoint; the token endpoint's also judges `grant_type`. */
export function oauthErrorHandler(opts: { checksGrantType: boolean }) {
  return async (err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const oauth = err instanceof OAuthError ? err : fromFastify(err as FastifyError, request, opts.checksGrantType);
    // RFC 6749 has no 507: a full disk is a temporary unavailability to an OAuth client.
    if (!oauth && isTemporarilyRefused(err)) {
      reply.code(503).header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      return noStore(reply).send({ error: 'temporarily_unavailable', error_description: 'The database cannot be reached right now; retry after Retry-After seconds' });
    }
    if (!oauth) {
      request.log.error({ err }, 'oauth request failed');
      return noStore(reply).code(500).send({ error: 'server_error', error_description: 'Internal error' });
    }
    if (oauth.limited) reply.code(429).header('retry-after', String(oauth.limited.retryAfterSeconds));
    else reply.code(400);
    return noStore(reply).send({ error: oauth.error, error_description: oauth.description });
  };
}
