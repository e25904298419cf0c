import { createHash } from 'node:crypto';

/**
 * V8 keeps at most 1,536 transitions on one map, and the map of `{}` gets one for every distinct
 * first property ever added to an empty object. Compiling the route schemas fills it (ajv keeps
 * its generated names in `{}`, fast-json-stringify keys its schemas by generated ids). After
 * that, an empty object whose first key has no transition yet gets a map outside the tree, and
 * every property added to it makes a new map, in the old generation: per request, for
 * Node's request headers and Fastify's reply headers, which start as `{}` (docs/benchmarks.md,
 * round twelve). The first keys those objects usually get are given their transitions here,
 * before anything compiles, and the objects are kept: a transition lasts as long as its map.
 * Node's hashes start the same way (`{ [kFinalized]: false }`, a symbol of its own), and every
 * request hashes its credential: one hash is made here and kept too.
 */
export const HEADER_FIRST_KEYS = [
  // What clients send first (Node lowercases request header names).
  'host',
  'authorization',
  'user-agent',
  'accept',
  'content-type',
  'content-length',
  'connection',
  'cookie',
  'origin',
  'service-context',
  'idempotency-key',
  'if-none-match',
  'if-match',
  'x-csrf-token',
  'x-forwarded-for',
  // What the routes and hooks set first on a reply.
  'etag',
  'cache-control',
  'location',
  'retry-after',
  'www-authenticate',
  'ratelimit-limit',
  'idempotent-replayed',
  'x-request-id',
  'set-cookie',
  'allow',
  'content-encoding',
  'vary',
] as const;

const held: object[] = [];

/** Gives each of the keys, and a hash's state, its transition from `{}`'s map, once per process. */
export function holdHeaderFirstKeys(): void {
  if (held.length > 0) return;
  held.push(createHash('sha256'));
  for (const key of HEADER_FIRST_KEYS) {
    const first: Record<string, string> = {};
    first[key] = '';
    held.push(first);
  }
}
