import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { versionOf } from '../db/json-rows.js';
import { PreSerialized } from '../shared/pre-serialized.js';
import { noneMatchHits } from './conditional-get.js';

const listEtag = (list: string, version: number, request: FastifyRequest) =>
  `W/"${createHash('sha256').update(`${list}\0${version}\0${request.url}`).digest('base64url').slice(0, 27)}"`;

/**
 * Conditional reads of the lists whose rows bump a version (migration 0018): the ETag is made
 * from the list, its version and the request's URL (its page, limit and filters), so If-None-Match
 * is answered 304 from one indexed row, before the page is read. A route opts in with
 * `config.listVersion`, which names its list for the request (after authentication and
 * Service-Context, so only a caller allowed to read the list learns that it is unchanged).
 *
 * A request without If-None-Match reads no version here: its page statement reads the version
 * with the rows (src/db/json-rows.ts, `jsonPage`), one round trip and one snapshot, and the answer
 * is tagged from it. A conditional request reads the version first; a write landing between that
 * and its page makes the tag older than the answer, never newer, so the worst it costs is one
 * more 200. Other GETs keep the tag of their answer (src/http/conditional-get.ts).
 */
export function listVersions(app: FastifyInstance<any, any, any, any, any>, db: Kysely<DB>): void {
  app.addHook('preHandler', async (request, reply) => {
    const listOf = request.routeOptions.config.listVersion;
    const asked = request.headers['if-none-match'];
    if (!listOf || request.method !== 'GET' || typeof asked !== 'string') return;
    const list = listOf(request);
    const etag = listEtag(list, (await versionOf(db, list))?.version ?? 0, request);
    reply.header('etag', etag);
    if (noneMatchHits(asked, etag)) return reply.code(304).send();
  });

  app.addHook('preSerialization', async (request, reply, payload) => {
    const listOf = request.routeOptions.config.listVersion;
    if (!listOf || request.method !== 'GET' || reply.statusCode !== 200 || reply.hasHeader('etag')) return payload;
    const tagged = payload instanceof PreSerialized ? payload.listVersion : undefined;
    const list = listOf(request);
    // Whatever tags the 200 must tag the conditional read the same way: a page read without its
    // version, or of another list, is a programming error, not an answer to send.
    if (!tagged || tagged.list !== list) throw new Error(`the page of versioned list ${list} did not carry its version`);
    reply.header('etag', listEtag(list, tagged.version, request));
    return payload;
  });
}
