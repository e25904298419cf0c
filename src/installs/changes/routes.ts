import type { App } from '../../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { quoteEtag } from '../../http/etag.js';
import { guarded } from '../../auth/roles.js';
import { ChangeRequest, ChangeRequestDiff, ChangeRequestList, ChangeRequestParams, ListChangeRequestsQuery, MergeChangeRequestBody, UpdateChangeRequestBody } from './schemas.js';
import type { ChangeRequestService } from './service.js';

const TAGS = ['installs'];
const STATES = 'Writes take If-Match (a stale one: 409, 7030, `metadata.current_etag`). A change request that is not open: 409, 7330, `metadata.state`.';

export function changeRequestRoutes(app: App, changes: ChangeRequestService): void {
  app.get(
    '/repository_change_requests',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'listRepositoryChangeRequests',
        tags: TAGS,
        summary: "The workspace's repository change requests, newest first",
        description: 'Filters: `install_id` (an install of another workspace, or none, lists nothing), `state`. Keyset pages: `next_cursor` is bound to the filters it was made with.',
        headers: requestHeaders(),
        querystring: ListChangeRequestsQuery,
        response: { 200: ChangeRequestList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => changes.list(workspaceCtx(request), request.query),
  );

  app.get(
    '/repository_change_requests/:id',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'getRepositoryChangeRequest',
        tags: TAGS,
        summary: 'A repository change request',
        description:
          "A render of an install whose `delivery` is `change_request` waits here for review: its head commit is `ref` (`refs/changes/<number>`) in the install's repository, built on `base_commit_sha`, the head of `main` (re-parented when `main` moves: a new head commit with the same tree, a new etag). `mergeable` is computed when read and is never null; `merge_blockers` lists every reason it is false.",
        headers: requestHeaders(),
        params: ChangeRequestParams,
        response: { 200: ChangeRequest, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const cr = await changes.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(cr.etag));
      return cr;
    },
  );

  app.get(
    '/repository_change_requests/:id/diff',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'getRepositoryChangeRequestDiff',
        tags: TAGS,
        summary: 'The files a change request changes, with both sides',
        description: "Between `base_commit_sha`'s tree and the head's, in path order: `added`, `modified` or `removed`, with each side's text (null where absent or not UTF-8).",
        headers: requestHeaders(),
        params: ChangeRequestParams,
        response: { 200: ChangeRequestDiff, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => changes.diff(workspaceCtx(request), request.params.id),
  );

  app.patch(
    '/repository_change_requests/:id',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'repository_change_request.updated' },
      schema: {
        operationId: 'updateRepositoryChangeRequest',
        tags: TAGS,
        summary: "Change a change request's title or description (If-Match)",
        description: 'In any state. A PATCH that changes nothing changes nothing, not even the etag. A stale If-Match: 409, 7030.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ChangeRequestParams,
        body: UpdateChangeRequestBody,
        response: { 200: ChangeRequest, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const cr = await changes.update(workspaceCtx(request), request.params.id, request.body, request.headers['if-match']);
      reply.header('etag', quoteEtag(cr.etag));
      return cr;
    },
  );

  app.post(
    '/repository_change_requests/:id(^[^:]+)::approve',
    {
      config: {
        scope: 'workspace',
        ...guarded('repository_change_requests.approve'),
        tokenScope: null,
        tokenScopeWhy: { tokens: 'refused', why: 'an approval is a person’s review (docs/spec-gaps.md, "Repository change requests"); a token could let its maker approve their own change' },
        event: 'repository_change_request.approved',
      },
      schema: {
        operationId: 'approveRepositoryChangeRequest',
        tags: TAGS,
        summary: 'Approve a change request as a signed-in member (If-Match)',
        description: `A person only: an API token is 403 (7023), the change request's author 403 (7333). Approving twice keeps one approval (and the etag). ${STATES}`,
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ChangeRequestParams,
        response: { 200: ChangeRequest, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const cr = await changes.approve(workspaceCtx(request), request.params.id, request.headers['if-match']);
      reply.header('etag', quoteEtag(cr.etag));
      return cr;
    },
  );

  app.post(
    '/repository_change_requests/:id(^[^:]+)::merge',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'repository_change_request.merged' },
      schema: {
        operationId: 'mergeRepositoryChangeRequest',
        tags: TAGS,
        summary: "Merge a change request: the install's main moves to its head (If-Match)",
        description:
          "In one transaction: `main` is checked to be the change request's base, the change request becomes `merged` (`merged_by`, `merged_at`), its render `succeeded` with the head as `commit_sha`, and the install's `current_version` moves; `main` moves to the head by compare-and-swap (a fast-forward: history is never rewritten). Of two merges, or a merge and a close, at once exactly one wins (the other: 409). A `head_commit_sha` that is no longer the head: 409, 7332, `metadata.head_commit_sha`. Not mergeable: 409, 7331, `metadata.merge_blockers` (comma-separated: `approvals_required`, `not_open`). `main` moved while the merge was checked: 409, 7336. A stale If-Match: 409, 7030.",
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ChangeRequestParams,
        body: MergeChangeRequestBody,
        response: { 200: ChangeRequest, ...errorResponses(401, 403, 404, 409, 422) },
      },
      // The body is optional (docs/spec-gaps.md, "Repository change requests"): none is `{}`, before the schema judges it.
      preValidation: (request, _reply, done) => {
        if (request.body === undefined || request.body === null) request.body = {};
        done();
      },
    },
    async (request, reply) => {
      const cr = await changes.merge(workspaceCtx(request), request.params.id, request.body, request.headers['if-match']);
      reply.header('etag', quoteEtag(cr.etag));
      return cr;
    },
  );

  app.post(
    '/repository_change_requests/:id(^[^:]+)::close',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'repository_change_request.closed' },
      schema: {
        operationId: 'closeRepositoryChangeRequest',
        tags: TAGS,
        summary: 'Close a change request unmerged: its render is canceled, main stays (If-Match)',
        description: STATES,
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ChangeRequestParams,
        response: { 200: ChangeRequest, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const cr = await changes.close(workspaceCtx(request), request.params.id, request.headers['if-match']);
      reply.header('etag', quoteEtag(cr.etag));
      return cr;
    },
  );

  app.post(
    '/repository_change_requests/:id(^[^:]+)::reopen',
    {
      config: { scope: 'workspace', tokenScope: 'installs:write', event: 'repository_change_request.reopened' },
      schema: {
        operationId: 'reopenRepositoryChangeRequest',
        tags: TAGS,
        summary: 'Reopen a closed change request: its render awaits a merge again (If-Match)',
        description:
          'Only a closed change request (else 409, 7335, `metadata.state`), and only while no newer render of the install exists (else 409, 7334, `metadata.render_id` names the newest). Re-parented onto `main` if it moved meanwhile. A stale If-Match: 409, 7030.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: ChangeRequestParams,
        response: { 200: ChangeRequest, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const cr = await changes.reopen(workspaceCtx(request), request.params.id, request.headers['if-match']);
      reply.header('etag', quoteEtag(cr.etag));
      return cr;
    },
  );
}
