import { Type } from '@sinclair/typebox';
import { sql, type Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import type { DB } from '../db/tables.js';
import type { App } from './fastify-types.js';
import { errorResponses } from './schemas.js';
import { ApiError } from '../shared/errors.js';

/** Unauthenticated operational routes of CONTRACT §8. */
export function systemRoutes(app: App, db: Kysely<DB>, metrics: Registry): void {
  const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });
  // Like every route, these take no query parameters: an unknown one is 422 (documented).
  app.get('/healthz', { config: { auth: 'none', database: false }, schema: { tags: ['system'], summary: 'Liveness', security: [], response: { 200: Status, ...errorResponses(422) } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { config: { auth: 'none' }, schema: { tags: ['system'], summary: 'Readiness: the database answers', security: [], response: { 200: Status, ...errorResponses(422, 503) } } },
    async () => {
      try {
        await sql`select 1`.execute(db);
      } catch {
        throw new ApiError('UNAVAILABLE', { message: 'The database does not answer' });
      }
      return { status: 'ready' };
    },
  );

  const Exposition = { description: 'The Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } };
  app.get('/metrics', { config: { auth: 'none', database: false }, schema: { tags: ['system'], summary: 'Prometheus metrics', security: [], hide: false, response: { 200: Exposition, ...errorResponses(422) } } }, async (_request, reply) => {
    reply.header('content-type', metrics.contentType);
    return metrics.metrics();
  });
}
