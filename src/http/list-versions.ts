import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { prepared } from '../db/prepared.js';
import { noneMatchHits } from './conditional-get.js';

const versionOf = prepared((db, list: string) => db.selectFrom('list_versions').select('version').where('list', '=', list)).first;

/**
 * Conditional reads of the lists whose rows bump a version (migration 0018): the ETag is made
 * from the list, its version and the request's URL (its page, limit and filters), so If-None-Match
 * is answered 304 from one indexed row, before the page is read. The version is read before the
 * page: a write landing in between makes the tag older than the answer, never newer, so the
 * worst it costs is one more 200. A route opts in with `config.listVersion`, which names its list
 * for the request (after authentication and Service-Context, so only a caller allowed to read
 * the list learns that it is unchanged). Other GETs keep the tag of their answer
 * (src/http/conditional-get.ts).
 */
export function listVersions(app: FastifyInstance<any, any, any, any, any>, db: Kysely<DB>): void {
  app.addHook('preHandler', async (request, reply) => {
    const listOf = request.routeOptions.config.listVersion;
    if (!listOf || request.method !== 'GET') return;
    const list = listOf(request);
    const version = (await versionOf(db, list))?.version ?? 0;
    const etag = `W/"${createHash('sha256').update(`${list}\0${version}\0${request.url}`).digest('base64url').slice(0, 27)}"`;
    reply.header('etag', etag);
    const asked = request.headers['if-none-match'];
    if (typeof asked === 'string' && noneMatchHits(asked, etag)) return reply.code(304).send();
  });
}
