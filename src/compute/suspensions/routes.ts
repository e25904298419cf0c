import type { App } from '../../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { quoteEtag } from '../../http/etag.js';
import { Machine } from '../machines/schemas.js';
import { SuspensionList, SuspensionParams } from './schemas.js';
import type { SuspensionService } from './service.js';

export function suspensionRoutes(app: App, suspensions: SuspensionService): void {
  app.get(
    '/compute/suspensions',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read', operationIdWhy: 'a list, answered as a bare array rather than {data: [...]}' },
      schema: {
        operationId: 'listComputeSuspensions',
        tags: ['compute'],
        summary: "The workspace's suspended machines",
        description: 'A bare array (not the list envelope), newest first. No parameters.',
        headers: requestHeaders(),
        response: { 200: SuspensionList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => suspensions.list(workspaceCtx(request)),
  );

  app.post(
    '/compute/suspensions/:id(^[^:]+)::resume',
    {
      config: { scope: 'workspace', tokenScope: 'compute:write', event: 'machine.resumed' },
      schema: {
        operationId: 'resumeComputeSuspension',
        tags: ['compute'],
        summary: 'Resume a suspended machine: recreate its server from the snapshot',
        description:
          'No If-Match (suspensions show no etag). Answers 200 with the machine in status `resuming` and its `operation_id`; when done the machine runs again, the snapshot is deleted and the suspension is over. A suspension already being resumed is 409 (7402); one that is over is 404.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: SuspensionParams,
        response: { 200: Machine, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const machine = await suspensions.resume(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(machine.etag));
      return machine;
    },
  );
}
