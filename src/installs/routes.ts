import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { quoteEtag } from '../http/etag.js';
import { CreateInstallBody, Install, InstallList, InstallParams, ListInstallsQuery, RestoreBody, RestoreResponse, UpdateInstallBody } from './schemas.js';
import type { InstallService } from './service.js';
import type { RestoreService } from './restore.js';
import { OperationAccepted } from '../operations/schemas.js';
import { guarded } from '../auth/roles.js';

export function installRoutes(app: App, installs: InstallService, restores: RestoreService): void {
  app.post(
    '/installs',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'install.created' },
      schema: {
        operationId: 'createInstall',
        tags: ['installs'],
        summary: 'Install a package version: a git repository and a first render',
        description:
          "Makes a bare git repository for the install and queues its first render (GET /v1/installs/{id}/renders). An unknown package or version is 404 at its body field; a version of another package is 422 (7303). `cluster_id` places it on a cluster of the workspace (404 at `body.cluster_id` for an unknown one). Over the quota of renders an hour of the workspace (WSP_QUOTA_RENDERS_PER_HOUR): 429, code 7040, `metadata.limit` and `Retry-After`, and nothing is made. While the workspace's repositories, as last measured, take its whole disk quota (WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES): 409, code 7066, `metadata.limit` and `metadata.used`, and nothing is made; a render that would take its repository past the install's quota (WSP_QUOTA_REPOSITORY_BYTES) or the workspace's repositories past theirs fails (7310), saying which.",
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateInstallBody,
        response: { 201: Install, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const install = await installs.create(workspaceCtx(request), request.body);
      return reply.code(201).header('etag', quoteEtag(install.etag)).send(install);
    },
  );

  app.get(
    '/installs',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'listInstalls',
        tags: ['installs'],
        summary: "The workspace's installs, newest first",
        description: '`cluster_id` lists only the installs placed on that cluster.',
        headers: requestHeaders(),
        querystring: ListInstallsQuery,
        response: { 200: InstallList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => installs.list(workspaceCtx(request), request.query.limit, request.query.cursor, request.query.cluster_id),
  );

  app.get(
    '/installs/:id',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'getInstall',
        tags: ['installs'],
        summary: 'An install',
        headers: requestHeaders(),
        params: InstallParams,
        response: { 200: Install, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const install = await installs.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(install.etag));
      return install;
    },
  );

  app.patch(
    '/installs/:id',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'install.updated' },
      schema: {
        operationId: 'updateInstall',
        tags: ['installs'],
        summary: 'Change the desired version, the values or automatic updates (If-Match)',
        description:
          "A new `desired_version_id` or new `values` queue a render; `automatic_updates_enabled` or `cluster_id` (a cluster of the workspace, 404 at `body.cluster_id`; null: none) alone does not. `values` replaces the values as a whole. Over the quota of renders an hour of the workspace (WSP_QUOTA_RENDERS_PER_HOUR): 429, code 7040, `metadata.limit` and `Retry-After`, and nothing is changed; a change that queues a render while the workspace's repositories take their whole disk quota (WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES): 409, code 7066, and nothing is changed.",
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: InstallParams,
        body: UpdateInstallBody,
        response: { 200: Install, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const install = await installs.update(workspaceCtx(request), request.params.id, request.body, request.headers['if-match']);
      reply.header('etag', quoteEtag(install.etag));
      return install;
    },
  );

  app.post(
    '/installs/:id(^[^:]+)::restore',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'install.restored' },
      schema: {
        operationId: 'restoreInstall',
        tags: ['installs'],
        summary: 'Restore a succeeded render of this install as a new commit',
        description:
          "Copies the render's git tree into a new commit on top of `main`; existing history is never rewritten. The answer's render is `running` with its `commit_sha` and an `operation_id` that a worker completes; `desired_version` becomes the restored render's version at once, `current_version` once the operation is done. Checked in order: an unknown render 404, a render of another package 422 (7304), a render of another install 404, a render not succeeded 409 (7305), then If-Match 409 (7030).",
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'required' }),
        params: InstallParams,
        body: RestoreBody,
        response: { 200: RestoreResponse, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const result = await restores.restore(workspaceCtx(request), request.params.id, request.body.render_id, request.headers['if-match']);
      reply.header('etag', quoteEtag(result.install.etag));
      return result;
    },
  );

  app.delete(
    '/installs/:id',
    {
      config: { scope: 'workspace', ...guarded('installs.delete'), tokenScope: 'installs:write', event: 'install.deleted' },
      schema: {
        operationId: 'deleteInstall',
        tags: ['installs'],
        summary: 'Delete an install (If-Match): it reads 404 at once, a job removes its git repository',
        description:
          "Answers 202 with the `operation_id` of the repository's removal (GET /v1/operations/{id}, kind `install.delete`). At once, in one transaction: the install reads 404 (GET, PATCH, `:restore`, its renders' list, its repository and git's clone URL) and leaves `GET /v1/installs`; its queued and running renders are canceled (state `superseded`, message `Canceled: the install was deleted`, their operations done); its name is free for a new install. Its renders stay readable by id (`GET /v1/renders/{id}`, the ids the audit log's `install.*` events name) for the audit period; their files (`GET /v1/renders/{id}/files`) went with the repository: 404. Owners and admins only. A stale If-Match is 409 (7030) with `metadata.current_etag`.",
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: InstallParams,
        response: { 202: OperationAccepted, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => reply.code(202).send(await installs.delete(workspaceCtx(request), request.params.id, request.headers['if-match'])),
  );
}
