import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/**
 * Conditional reads (RFC 9110 §13.1.2): every JSON answer of a GET carries an ETag (the
 * resource's own when the route set one, else a hash of the body) and a GET whose
 * If-None-Match names it is answered 304 with no body, so a client that kept the last answer
 * (the console, the CLI, a poller) does not receive it again. The hash is of the answer as it
 * is for this caller, so another caller's tag never matches another caller's body.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function conditionalGets(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
    let etag = reply.getHeader('etag');
    if (typeof etag !== 'string') {
      etag = `W/"${createHash('sha256').update(payload).digest('base64url').slice(0, 27)}"`;
      reply.header('etag', etag);
    }
    const asked = request.headers['if-none-match'];
    if (typeof asked !== 'string' || !noneMatchHits(asked, etag)) return payload;
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    // No payload at all: an empty string would be sent with Content-Length: 0, which a 304 must
    // not claim (RFC 9110 §8.6: it would be the length of the 200 it stands for).
    return null;
  });
}

/** The opaque tag, weak or not (If-None-Match compares weakly). */
const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/** Whether If-None-Match (`*`, or a list of tags) names this ETag. */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const mine = opaque(etag);
  return header.split(',').some((t) => opaque(t) === mine);
}

/** What the document says of it. */
export const NOT_MODIFIED = 'Not modified: If-None-Match names the ETag of the answer as it is now; no body';
export const IF_NONE_MATCH = 'The ETag of an answer kept from before (or several, comma-separated): 304 while it is still the answer';
