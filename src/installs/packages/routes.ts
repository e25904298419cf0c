import type { App } from '../../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { CreatePackageBody, CreateVersionBody, ListQuery, Package, PackageList, PackageParams, PackageVersion, PackageVersionList, PackageVersionParams, Preview, PreviewBody } from './schemas.js';
import type { PackageService } from './service.js';
import { EVERY_ROLE, guarded } from '../../auth/roles.js';
import { quoteEtag } from '../../http/etag.js';

export function packageRoutes(app: App, packages: PackageService): void {
  app.post(
    '/packages',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'package.created' },
      schema: {
        operationId: 'createPackage',
        tags: ['packages'],
        summary: 'Create a package',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreatePackageBody,
        response: { 201: Package, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const pkg = await packages.create(workspaceCtx(request), request.body);
      return reply.code(201).header('etag', quoteEtag(pkg.etag)).send(pkg);
    },
  );

  app.get(
    '/packages',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'listPackages',
        tags: ['packages'],
        summary: "The workspace's packages, newest first",
        headers: requestHeaders(),
        querystring: ListQuery,
        response: { 200: PackageList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => packages.list(workspaceCtx(request), request.query.limit, request.query.cursor),
  );

  app.get(
    '/packages/:id',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'getPackage',
        tags: ['packages'],
        summary: 'A package',
        headers: requestHeaders(),
        params: PackageParams,
        response: { 200: Package, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const pkg = await packages.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(pkg.etag));
      return pkg;
    },
  );

  app.delete(
    '/packages/:id',
    {
      config: { scope: 'workspace', ...guarded('packages.delete'), tokenScope: 'installs:write', event: 'package.deleted' },
      schema: {
        operationId: 'deletePackage',
        tags: ['packages'],
        summary: 'Delete a package and its versions (If-Match)',
        description:
          "While a live install uses any version of the package: 409 (7308) with `metadata.install_ids` (comma-separated, at most 20; deleted installs do not count). Otherwise 204: the package and its versions read 404 and leave the lists, and its name is free for a new package. The renders of deleted installs still name its versions' ids. Owners and admins only. A stale If-Match is 409 (7030) with `metadata.current_etag`.",
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: PackageParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await packages.delete(workspaceCtx(request), request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/packages/:id/versions',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'package_version.created' },
      schema: {
        operationId: 'createPackageVersion',
        tags: ['packages'],
        summary: 'Publish a version of a package (immutable)',
        description:
          'Every path and template is checked: a bad path is 422 (7307) and a template Mustache cannot parse is 422 (7306), each at `["body","files",<path>]`. A semver the package already has is 409 (7301).',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: PackageParams,
        body: CreateVersionBody,
        response: { 201: PackageVersion, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await packages.createVersion(workspaceCtx(request), request.params.id, request.body)),
  );

  app.get(
    '/packages/:id/versions',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'listPackageVersions',
        tags: ['packages'],
        summary: "A package's versions, newest first, without their files",
        headers: requestHeaders(),
        params: PackageParams,
        querystring: ListQuery,
        response: { 200: PackageVersionList, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => packages.listVersions(workspaceCtx(request), request.params.id, request.query.limit, request.query.cursor),
  );

  app.get(
    '/packages/:id/versions/:version_id',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'getPackageVersion',
        tags: ['packages'],
        summary: 'A package version with its files',
        headers: requestHeaders(),
        params: PackageVersionParams,
        response: { 200: PackageVersion, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => packages.getVersion(workspaceCtx(request), request.params.id, request.params.version_id),
  );

  app.post(
    '/packages/:id/versions/:version_id(^[^:]+)::preview',
    {
      // A POST that only reads: a viewer may preview too.
      config: { scope: 'workspace', roles: EVERY_ROLE, tokenScope: 'installs:read', event: null, eventWhy: 'a preview renders and writes nothing: a read' },
      schema: {
        operationId: 'previewPackageVersion',
        tags: ['packages'],
        summary: "See a version's rendered files with some values, before installing it",
        description:
          "Renders as an install would (the same render threads, step, time and memory limits, and the workspace's output quota) and writes nothing: no install, no render, no commit. A value missing from a template, or a render past a limit, is 422 (7310) naming the file and the value or limit. Any member may preview.",
        headers: requestHeaders(),
        params: PackageVersionParams,
        body: PreviewBody,
        response: { 200: Preview, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => packages.preview(workspaceCtx(request), request.params.id, request.params.version_id, request.body.values ?? {}),
  );
}
