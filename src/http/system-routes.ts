import fs from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { sql, type Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import type { DB } from '../db/tables.js';
import type { App } from './fastify-types.js';
import { errorResponses } from './schemas.js';
import { packageRoot } from '../shared/package-root.js';
import { ApiError, ErrorCodes, type ErrorEntry } from '../shared/errors.js';

/** Unauthenticated operational routes of docs/spec-gaps.md, "Conventions". */
export interface Readiness {
  /** What is wrong with the installs' repository volume (missing, read-only, full); null when it can be written. */
  repositories(): { problem: string; message: string } | null;
}

export function systemRoutes(app: App, db: Kysely<DB>, metrics: Registry, readiness: Readiness): void {
  const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });
  // Like every route, these take no query parameters: an unknown one is 422 (documented).
  app.get(
    '/healthz',
    {
      config: { auth: 'none', database: false, operationIdWhy: 'a probe of the process, not a resource' },
      schema: {
        operationId: 'checkLiveness',
        tags: ['system'],
        summary: 'Liveness',
        description: 'Answers 200 while the process serves requests, whether or not the database does: for a supervisor deciding to restart it.',
        security: [],
        response: { 200: Status, ...errorResponses(422) },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'none', operationIdWhy: 'a probe of the database and the repository volume, not a resource' },
      schema: {
        operationId: 'checkReadiness',
        tags: ['system'],
        summary: 'Readiness: the database answers and the repository volume can be written',
        description:
          "Answers 200 when the database answers a query and a small file can be written to and removed from the installs' repository volume (WSP_REPO_DIR), whose marker file must be there; else 503 with one error per failing part: 7098 with `metadata.part` `database`, or 7058 with `metadata.part` `repositories` and `metadata.problem` `missing`, `read-only`, `full` or `not-writable`. For a load balancer deciding to send traffic here, and for an operator asking what is wrong.",
        security: [],
        response: { 200: Status, ...errorResponses(422, 503) },
      },
    },
    async () => {
      const failing: ErrorEntry[] = [];
      try {
        await sql`select 1`.execute(db);
      } catch {
        failing.push({ code: ErrorCodes.UNAVAILABLE.code, message: 'The database does not answer', metadata: { part: 'database' } });
      }
      const volume = readiness.repositories();
      if (volume) failing.push({ code: ErrorCodes.REPOSITORY_UNAVAILABLE.code, message: volume.message, metadata: { part: 'repositories', problem: volume.problem } });
      if (failing.length > 0) throw new ApiError('UNAVAILABLE', { entries: failing });
      return { status: 'ready' };
    },
  );

  const Exposition = { description: 'The Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } };
  app.get(
    '/metrics',
    {
      config: { auth: 'none', database: false, operationIdWhy: 'the Prometheus exposition, not a list of resources named metric' },
      schema: {
        operationId: 'getPrometheusMetrics',
        tags: ['system'],
        summary: 'Prometheus metrics',
        description:
          'Request counts and latencies by route and status, route schemas still compiling, the retained heap and the process metrics (CPU, memory, event-loop delay, handles), in the Prometheus text format.',
        security: [],
        hide: false,
        response: { 200: Exposition, ...errorResponses(422) },
      },
    },
    async (_request, reply) => {
      reply.header('content-type', metrics.contentType);
      return metrics.metrics();
    },
  );

  // The OpenAPI document's info.license links here: the terms ship with the server.
  const licence = fs.readFileSync(path.join(packageRoot(), 'LICENSE'), 'utf8');
  // The example is the text's opening lines: the whole of it would be copied into every
  // client generated from the document (the SDK's openapi.json and schema.ts).
  const opening = `${licence
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join('\n')}\n...`;
  const LicenceText = { description: 'The terms, as plain text (Apache License 2.0)', content: { 'text/plain': { schema: { type: 'string' }, example: opening } } };
  app.get(
    '/license',
    {
      config: { auth: 'none', database: false },
      schema: {
        operationId: 'getLicense',
        tags: ['system'],
        summary: 'The licence of this software',
        description: 'The terms under which this server is used, as plain text (the LICENSE file it ships with).',
        security: [],
        response: { 200: LicenceText, ...errorResponses(422) },
      },
    },
    async (_request, reply) => {
      reply.header('content-type', 'text/plain; charset=utf-8');
      return licence;
    },
  );
}
