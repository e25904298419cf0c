import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { versionOf } from '../db/json-rows.js';
import { PreSerialized } from '../shared/pre-serialized.js';
import { noneMatchHits } from './conditional-get.js';
import { AnswerCache } from './answer-cache.js';

const listEtag = (list: string, version: number, request: FastifyRequest) =>
  `W/"${createHash('sha256').update(`${list}\0${version}\0${request.url}`).digest('base64url').slice(0, 27)}"`;

/** The pages kept, in characters of JSON: about 200 pages of 50 API tokens. */
export const LIST_PAGE_CACHE_CHARS = 4_000_000;

/**
 * Reads of the lists whose rows bump a version (migration 0018): the ETag is made from the list,
 * its version and the request's URL (its page, limit and filters). A route opts in with
 * `config.listVersion`, which names its list for the request (after authentication and
 * Service-Context, so only a caller allowed to read the list learns anything of it).
 *
 * Every GET reads the version first, from one indexed row: If-None-Match naming the tag is
 * answered 304, and a page this process already wrote at that version is sent again without
 * being read (the tag is the cache's key: the same list, version and URL is the same answer, for
 * any caller allowed to read it, on every instance, as the 304 already relies on). Otherwise the
 * page statement reads the rows and the version in one snapshot (src/db/json-rows.ts), and the
 * answer is tagged, and kept, by the version it was read at. A write landing between the two
 * reads only makes the tag newer than the one compared: one more 200, never a stale answer.
 */
export function listVersions(app: FastifyInstance<any, any, any, any, any>, db: Kysely<DB>, pages = new AnswerCache(LIST_PAGE_CACHE_CHARS)): void {
  app.addHook('preHandler', async (request, reply) => {
    const listOf = request.routeOptions.config.listVersion;
    if (!listOf || request.method !== 'GET') return;
    const list = listOf(request);
    const etag = listEtag(list, (await versionOf(db, list))?.version ?? 0, request);
    const asked = request.headers['if-none-match'];
    if (typeof asked === 'string' && noneMatchHits(asked, etag)) {
      reply.header('etag', etag);
      return reply.code(304).send();
    }
    const kept = pages.get(etag);
    if (kept === undefined) return;
    reply.header('etag', etag);
    reply.header('content-type', 'application/json; charset=utf-8');
    return reply.send(kept);
  });

  app.addHook('preSerialization', async (request, reply, payload) => {
    const listOf = request.routeOptions.config.listVersion;
    if (!listOf || request.method !== 'GET' || reply.statusCode !== 200) return payload;
    const tagged = payload instanceof PreSerialized ? payload.listVersion : undefined;
    const list = listOf(request);
    // Whatever tags the 200 must tag the conditional read the same way: a page read without its
    // version, or of another list, is a programming error, not an answer to send.
    if (!tagged || tagged.list !== list) throw new Error(`the page of versioned list ${list} did not carry its version`);
    const etag = listEtag(list, tagged.version, request);
    reply.header('etag', etag);
    pages.set(etag, (payload as PreSerialized).json);
    return payload;
  });
}
