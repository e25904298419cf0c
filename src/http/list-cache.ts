import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { listVersions } from '../db/list-version-rows.js';
import { PreSerialized } from '../shared/pre-serialized.js';
import { noneMatchHits } from './conditional-get.js';
import { AnswerCache } from './answer-cache.js';

/** Tags already made, by what they are made of: a hash is 5-10 µs of a 180 µs read under load. */
const tagsMade = new Map<string, string>();
/** Bounded by the characters of what they are made of, which holds the caller's URL (up to the 16 KiB of a request's head). */
const TAG_SOURCES_KEPT_CHARS = 1_000_000;
let tagSourceChars = 0;

/** The tag of an answer made from these lists at these versions, for this URL (its page, limit and filters). */
function versionEtag(versions: readonly (readonly [string, number])[], request: FastifyRequest): string {
  const source = `${versions.map(([list, version]) => `${list}\0${version}`).join('\0')}\0${request.url}`;
  let tag = tagsMade.get(source);
  if (tag === undefined) {
    tag = `W/"${createHash('sha256').update(source).digest('base64url').slice(0, 27)}"`;
    // Whole, not one by one: a bound on memory, and the tags in use are made again at once.
    if (tagSourceChars + source.length > TAG_SOURCES_KEPT_CHARS) {
      tagsMade.clear();
      tagSourceChars = 0;
    }
    tagsMade.set(source, tag);
    tagSourceChars += source.length;
  }
  return tag;
}

/** The characters the kept tags are made of (tests hold it to its bound). */
export const heldTagSourceChars = (): number => tagSourceChars;

type ListOf = (request: FastifyRequest) => string;
type ListsOf = (request: FastifyRequest) => readonly string[] | undefined;

/** Appends a hook to one route's own hooks of that kind (they run after the application's). */
function addRouteHook(route: object, name: 'preHandler' | 'preSerialization' | 'onSend', hook: unknown): void {
  const hooks = route as Record<string, unknown>;
  const before = hooks[name];
  hooks[name] = [...(before === undefined ? [] : Array.isArray(before) ? before : [before]), hook];
}

/** The pages kept, in bytes of JSON: about 200 pages of 50 API tokens. */
export const LIST_PAGE_CACHE_BYTES = 4_000_000;

/**
 * Reads of what rows bump a version of (migrations 0018 and 0020): the ETag is made from the
 * lists, their versions and the request's URL. A route opts in with `config.listVersion` (one
 * list, whose page carries its version) or `config.versionedBy` (the lists its answer is made
 * from), which name the lists for the request after authentication and Service-Context, so only
 * a caller allowed to read them learns anything of them.
 *
 * Every GET reads the versions first, from indexed rows, in one statement with the other requests of
 * its turn of the event loop (src/db/list-version-rows.ts), or takes those its credential's
 * statement read (`config.listWithCredential`, when they are the lists): If-None-Match naming the tag is answered
 * 304, and an answer this process already sent at those versions is sent again without being
 * made (the tag is the cache's key: the same lists, versions and URL are the same answer, for any
 * caller allowed to read it, on every instance, as the 304 already relies on). Otherwise the
 * answer is made, read after the versions: a page carrying its own version is tagged by it (its
 * snapshot), any other by the versions read before it. Either way a write landing in between makes
 * the answer newer than its tag, never older: the next read sees another version, and the worst
 * it costs is one more 200.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function listCache(app: FastifyInstance<any, any, any, any, any>, db: Kysely<DB>, pages = new AnswerCache(LIST_PAGE_CACHE_BYTES)): void {
  app.decorateRequest('versionTag', null);

  // Hooks of the routes that opt in only: every other request goes by without three more hooks.
  app.addHook('onRoute', (route) => {
    const { listVersion, versionedBy } = (route.config ?? {}) as { listVersion?: ListOf; versionedBy?: ListsOf };
    if (!listVersion && !versionedBy) return;
    const listsOf: ListsOf = listVersion ? (request) => [listVersion(request)] : versionedBy!;

    addRouteHook(route, 'preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.method !== 'GET') return;
      const lists = listsOf(request);
      if (!lists) return;
      const read = request.listRead;
      // The credential's statement's versions only where they are exactly these lists (named after
      // authentication and Service-Context): a session's user lists, or another workspace's, are read here.
      const versions = read && read.length === lists.length && read.every((r, i) => r.list === lists[i]) ? read.map((r) => [r.list, r.version] as const) : await listVersions(db, lists);
      const etag = versionEtag(versions, request);
      const asked = request.headers['if-none-match'];
      if (typeof asked === 'string' && noneMatchHits(asked, etag)) {
        reply.header('etag', etag);
        return reply.code(304).send();
      }
      const kept = pages.get(etag);
      if (kept === undefined) {
        if (!listVersion) request.versionTag = etag;
        return;
      }
      reply.header('etag', etag);
      reply.header('content-type', 'application/json; charset=utf-8');
      return reply.send(kept);
    });

    addRouteHook(route, 'preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (request.method !== 'GET' || reply.statusCode !== 200) return payload;
      if (!listVersion) {
        if (request.versionTag) reply.header('etag', request.versionTag);
        return payload;
      }
      const tagged = payload instanceof PreSerialized ? payload.listVersion : undefined;
      const list = listVersion(request);
      // Whatever tags the 200 must tag the conditional read the same way: a page read without its
      // version, or of another list, is a programming error, not an answer to send.
      if (!tagged || tagged.list !== list) throw new Error(`the page of versioned list ${list} did not carry its version`);
      request.versionTag = versionEtag([[list, tagged.version]], request);
      reply.header('etag', request.versionTag);
      return payload;
    });

    addRouteHook(route, 'onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const tag = request.versionTag;
      if (!tag || reply.statusCode !== 200 || typeof payload !== 'string' || reply.getHeader('etag') !== tag) return payload;
      // Sent as the bytes kept, as every later answer from the cache is.
      const bytes = Buffer.from(payload);
      pages.set(tag, bytes);
      return bytes;
    });
  });
}
