import type { App } from '../../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { quoteEtag } from '../../http/etag.js';
import { guarded } from '../../auth/roles.js';
import { Cluster, ClusterList, ClusterParams, CreateClusterBody, ListClustersQuery, UpdateClusterBody } from './schemas.js';
import type { ClusterService } from './service.js';

export function clusterRoutes(app: App, clusters: ClusterService): void {
  app.post(
    '/clusters',
    {
      config: { scope: 'workspace', tokenScope: 'compute:write', event: 'cluster.created' },
      schema: {
        operationId: 'createCluster',
        tags: ['compute'],
        summary: 'Create a cluster in a region',
        description:
          'Answers 201 with the cluster (`status` `empty`). `name`: 1-63 characters of a-z, 0-9 and -, unique in the workspace (409, 7410; `default` is the default cluster\'s). `region` must be a region of GET /v1/regions (422 naming them, path `["body","region"]`): only machines of compute configs of that region can join it. 503 with Retry-After when the provider cannot answer.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateClusterBody,
        response: { 201: Cluster, ...errorResponses(401, 403, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const cluster = await clusters.create(workspaceCtx(request), request.body);
      return reply.code(201).header('etag', quoteEtag(cluster.etag)).send(cluster);
    },
  );

  app.get(
    '/clusters',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'listClusters',
        tags: ['compute'],
        summary: "The workspace's clusters, newest first, each with its status and machine counts",
        description: 'The default cluster is listed once it exists: it is made when the first machine is created without `cluster_id`.',
        headers: requestHeaders(),
        querystring: ListClustersQuery,
        response: { 200: ClusterList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => clusters.list(workspaceCtx(request), request.query.limit, request.query.cursor),
  );

  app.get(
    '/clusters/:id',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'getCluster',
        tags: ['compute'],
        summary: 'A cluster, with its status derived from its machines',
        headers: requestHeaders(),
        params: ClusterParams,
        response: { 200: Cluster, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const cluster = await clusters.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(cluster.etag));
      return cluster;
    },
  );

  app.patch(
    '/clusters/:id',
    {
      config: { scope: 'workspace', tokenScope: 'compute:write', event: 'cluster.updated' },
      schema: {
        operationId: 'updateCluster',
        tags: ['compute'],
        summary: 'Rename a cluster or change its description (If-Match)',
        description:
          'Each field given replaces that field; a PATCH that changes nothing keeps the etag. A name another cluster has: 409 (7410). The default cluster keeps the name `default` (409, 7411); its description may change. The region cannot change: its machines were made there.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ClusterParams,
        body: UpdateClusterBody,
        response: { 200: Cluster, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const cluster = await clusters.update(workspaceCtx(request), request.params.id, request.body, request.headers['if-match']);
      reply.header('etag', quoteEtag(cluster.etag));
      return cluster;
    },
  );

  app.delete(
    '/clusters/:id',
    {
      config: { scope: 'workspace', ...guarded('clusters.delete'), tokenScope: 'compute:write', event: 'cluster.deleted' },
      schema: {
        operationId: 'deleteCluster',
        tags: ['compute'],
        summary: 'Delete an empty cluster (If-Match)',
        description:
          'Answers at once: 204 when the cluster holds nothing; 409 (7412) while it holds machines (in any status, also being deleted) or live installs, with `metadata.machine_ids` and `metadata.install_ids` naming them (comma-separated, at most 50 each) and `metadata.machine_count` / `metadata.install_count`. The default cluster cannot be deleted (409, 7411). Needs the admin or owner role.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ClusterParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await clusters.delete(workspaceCtx(request), request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );
}
