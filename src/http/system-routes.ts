import fs from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { sql, type Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import type { DB } from '../db/tables.js';
import type { App } from './fastify-types.js';
import { errorResponses } from './schemas.js';
import { packageRoot } from '../shared/package-root.js';
import { ApiError } from '../shared/errors.js';

/** Unauthenticated operational routes of CONTRACT §8. */
export function systemRoutes(app: App, db: Kysely<DB>, metrics: Registry): void {
  const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });
  // Like every route, these take no query parameters: an unknown one is 422 (documented).
  app.get('/healthz', { config: { auth: 'none', database: false }, schema: { tags: ['system'], summary: 'Liveness', description: 'Answers 200 while the process serves requests, whether or not the database does: for a supervisor deciding to restart it.', security: [], response: { 200: Status, ...errorResponses(422) } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { config: { auth: 'none' }, schema: { tags: ['system'], summary: 'Readiness: the database answers', description: 'Answers 200 when the database answers a query, else 503 (7054): for a load balancer deciding to send traffic here.', security: [], response: { 200: Status, ...errorResponses(422, 503) } } },
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
  app.get('/metrics', { config: { auth: 'none', database: false }, schema: { tags: ['system'], summary: 'Prometheus metrics', description: 'Request counts and latencies by route and status, job queue depths, and the process metrics, in the Prometheus text format.', security: [], hide: false, response: { 200: Exposition, ...errorResponses(422) } } }, async (_request, reply) => {
    reply.header('content-type', metrics.contentType);
    return metrics.metrics();
  });

  // The OpenAPI document's info.license links here: the terms ship with the server.
  const licence = fs.readFileSync(path.join(packageRoot(), 'LICENSE'), 'utf8');
  const LicenceText = { description: 'The terms, as plain text', content: { 'text/plain': { schema: { type: 'string' }, example: licence } } };
  app.get('/license', { config: { auth: 'none', database: false }, schema: { tags: ['system'], summary: 'The licence of this software', description: 'The terms under which this server is used, as plain text (the LICENSE file it ships with).', security: [], response: { 200: LicenceText, ...errorResponses(422) } } }, async (_request, reply) => {
    reply.header('content-type', 'text/plain; charset=utf-8');
    return licence;
  });
}
