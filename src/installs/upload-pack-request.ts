import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../shared/errors.js';
import { UPLOAD_PACK_REQUEST } from '../git/smart-http.js';

const gunzip = promisify(zlib.gunzip);

/**
 * A negotiation request is a few KiB (wants and haves); the body as sent is held to the
 * server's 1 MiB limit like every other, and git's gzip of it may inflate to at most this.
 */
export const MAX_INFLATED_BYTES = 8 * 1024 * 1024;

/**
 * The body of `POST .../git-upload-pack`, checked before the route's 403 and 404 like any
 * other input (docs/spec-gaps.md, "Conventions"'s order): git's content type (415 otherwise), not empty (422),
 * inflated when git sent it gzip-encoded (bad gzip 422, too big inflated 413; any encoding
 * other than gzip or identity 415). Returns the bytes git upload-pack reads.
 */
export async function uploadPackRequestBody(request: FastifyRequest): Promise<Buffer> {
  const body = request.body;
  if (!Buffer.isBuffer(body)) {
    if (body === undefined) throw new ApiError('VALIDATION_FAILED', { message: `body is required: git's ${UPLOAD_PACK_REQUEST}`, path: ['body'] });
    // Another content type a parser of the server took (JSON).
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', { message: `The request body must be ${UPLOAD_PACK_REQUEST}`, path: ['headers', 'content-type'] });
  }
  const encoding = String(request.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding === 'identity') return body;
  if (encoding !== 'gzip' && encoding !== 'x-gzip') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', { message: 'content-encoding must be gzip or identity', path: ['headers', 'content-encoding'] });
  }
  try {
    return await gunzip(body, { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ApiError('BODY_TOO_LARGE', { message: `The request body inflates to more than ${MAX_INFLATED_BYTES / 1024 / 1024} MiB` });
    }
    throw new ApiError('VALIDATION_FAILED', { message: 'body is not valid gzip (content-encoding: gzip)', path: ['body'] });
  }
}

/**
 * An upload-pack is a read that git sends as POST: an Idempotency-Key, should a client send
 * one, is held to its form (1-64 characters, 422) and then ignored, since the answer is a
 * stream that is neither stored nor replayed. Removed before the pipeline's preHandler, which
 * would otherwise claim it.
 */
export function ignoreIdempotencyKey(request: FastifyRequest): void {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return;
  if (typeof key !== 'string' || key.length < 1 || key.length > 64) {
    throw new ApiError('VALIDATION_FAILED', { message: 'idempotency-key must be 1-64 characters', path: ['headers', 'idempotency-key'] });
  }
  delete request.headers['idempotency-key'];
}
