import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { Operation, OperationParams } from './schemas.js';
import type { OperationService } from './service.js';

export function operationRoutes(app: App, operations: OperationService): void {
  app.get(
    '/operations/:id',
    {
      config: {
        scope: 'workspace',
        tokenScope: null,
        tokenScopeWhy: {
          tokens: 'open',
          why: "an operation tells the state of work, the ids it made and a failure's fixed message, never a resource's contents; its id goes to whoever started the work (which needed that area's write scope) and shows on resources that need a read scope",
        },
      },
      schema: {
        operationId: 'getOperation',
        tags: ['operations'],
        summary: 'An asynchronous operation: poll until `done`',
        description: "What a 202 answer pointed at: its state, and once `done`, its result or its error. Poll with a pause (the SDK's waitForOperation backs off).",
        headers: requestHeaders(),
        params: OperationParams,
        response: { 200: Operation, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => operations.get(workspaceCtx(request), request.params.id),
  );
}
