import type { App } from '../../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { quoteEtag } from '../../http/etag.js';
import { CreateSnippetBody, ListSnippetsQuery, Snippet, SnippetList, SnippetParams, UpdateSnippetBody } from './schemas.js';
import type { SnippetService } from './service.js';

const tags = ['snippets'];

export function snippetRoutes(app: App, snippets: SnippetService): void {
  app.post(
    '/snippets',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'snippet.created' },
      schema: {
        operationId: 'createSnippet',
        tags,
        summary: 'Create a snippet',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateSnippetBody,
        response: { 201: Snippet, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const snippet = await snippets.create(workspaceCtx(request), request.body);
      return reply.code(201).header('etag', quoteEtag(snippet.etag)).send(snippet);
    },
  );

  app.get(
    '/snippets',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:read' },
      schema: {
        operationId: 'listSnippets',
        tags,
        summary: "The workspace's snippets, newest first",
        headers: requestHeaders(),
        querystring: ListSnippetsQuery,
        response: { 200: SnippetList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => snippets.list(workspaceCtx(request), request.query.limit, request.query.cursor),
  );

  app.get(
    '/snippets/:id',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:read' },
      schema: {
        operationId: 'getSnippet',
        tags,
        summary: 'A snippet',
        headers: requestHeaders(),
        params: SnippetParams,
        response: { 200: Snippet, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const snippet = await snippets.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(snippet.etag));
      return snippet;
    },
  );

  app.patch(
    '/snippets/:id',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'snippet.updated' },
      schema: {
        operationId: 'updateSnippet',
        tags,
        summary: 'Change a snippet (If-Match); a change gives it a new etag',
        description: 'A PATCH that changes nothing keeps the etag. Widgets that pin the old etag show it in `snippet_etag_drift`.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: SnippetParams,
        body: UpdateSnippetBody,
        response: { 200: Snippet, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const snippet = await snippets.update(workspaceCtx(request), request.params.id, request.body, request.headers['if-match']);
      reply.header('etag', quoteEtag(snippet.etag));
      return snippet;
    },
  );

  for (const action of ['archive', 'unarchive'] as const) {
    app.post(
      `/snippets/:id(^[^:]+)::${action}`,
      {
        // Archiving an archived snippet (or unarchiving an active one) changes nothing and records nothing.
        config: { scope: 'workspace', tokenScope: 'dashboards:write', event: action === 'archive' ? 'snippet.archived' : 'snippet.unarchived' },
        schema: {
          operationId: action === 'archive' ? 'archiveSnippet' : 'unarchiveSnippet',
          tags,
          summary: action === 'archive' ? 'Archive a snippet (If-Match)' : 'Make an archived snippet active again (If-Match)',
          description:
            action === 'archive'
              ? 'The snippet is kept; revisions that use it show `current_state: archived`, and restoring one reactivates it. Archiving an archived snippet changes nothing.'
              : 'Unarchiving an active snippet changes nothing.',
          headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
          params: SnippetParams,
          response: { 200: Snippet, ...errorResponses(401, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        const snippet = await snippets[action](workspaceCtx(request), request.params.id, request.headers['if-match']);
        reply.header('etag', quoteEtag(snippet.etag));
        return snippet;
      },
    );
  }

  app.delete(
    '/snippets/:id',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'snippet.deleted' },
      schema: {
        operationId: 'deleteSnippet',
        tags,
        summary: 'Delete a snippet (If-Match)',
        description: 'Revisions that use it show `current_state: missing`; restoring one of them is blocked (409, 7100).',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: SnippetParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await snippets.delete(workspaceCtx(request), request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );
}
