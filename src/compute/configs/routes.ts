import type { App } from '../../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { quoteEtag } from '../../http/etag.js';
import { ComputeConfig, ComputeConfigList, ComputeConfigParams, CreatedComputeConfig, createComputeConfigBody, ListComputeConfigsQuery } from './schemas.js';
import type { ComputeConfigService } from './service.js';
import { guarded } from '../../auth/roles.js';

export function computeConfigRoutes(app: App, configs: ComputeConfigService, providerId: string): void {
  app.post(
    '/compute/configs',
    {
      config: { scope: 'workspace', tokenScope: 'compute:write', event: 'compute_config.created' },
      schema: {
        operationId: 'createComputeConfig',
        tags: ['compute'],
        summary: 'Create a compute config',
        description:
          'Answers 201 `{id}`. `region` must be one of the provider\'s locations, `image` an image it offers, and `machine_type_filter` (default `*`) must match at least one server type offered in the region (422 with each field\'s path). `secret_id` must name a secret of the workspace (404, path `["body","secret_id"]`). 503 with Retry-After when the provider cannot answer.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: createComputeConfigBody(providerId),
        response: { 201: CreatedComputeConfig, ...errorResponses(401, 403, 404, 409, 422, 503) },
      },
    },
    async (request, reply) => reply.code(201).send(await configs.create(workspaceCtx(request), request.body)),
  );

  app.get(
    '/compute/configs',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'listComputeConfigs',
        tags: ['compute'],
        summary: "The workspace's compute configs, newest first",
        headers: requestHeaders(),
        querystring: ListComputeConfigsQuery,
        response: { 200: ComputeConfigList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => configs.list(workspaceCtx(request), request.query.limit, request.query.cursor),
  );

  app.get(
    '/compute/configs/:id',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'getComputeConfig',
        tags: ['compute'],
        summary: 'A compute config',
        headers: requestHeaders(),
        params: ComputeConfigParams,
        response: { 200: ComputeConfig, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const config = await configs.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(config.etag));
      return config;
    },
  );

  app.delete(
    '/compute/configs/:id',
    {
      config: { scope: 'workspace', ...guarded('compute_configs.delete'), tokenScope: 'compute:write', event: 'compute_config.deleted' },
      schema: {
        operationId: 'deleteComputeConfig',
        tags: ['compute'],
        summary: 'Delete a compute config (If-Match)',
        description:
          "409 (7400) while a machine still needs the config's provider account: one that is not failed or expired, or any whose server or snapshot the provider still holds (an expired machine until its snapshot's deletion is confirmed).",
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ComputeConfigParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await configs.delete(workspaceCtx(request), request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );
}
