import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { requestCtx, workspaceCtx } from '../http/context.js';
import { quoteEtag } from '../http/etag.js';
import { ChangeRoleBody, CreateWorkspaceBody, Member, MemberList, MemberParams, UpdateWorkspaceBody, Workspace, WorkspaceList, WorkspaceParams } from './schemas.js';
import { PageQuery, NoContent } from '../http/schemas.js';
import type { WorkspaceService } from './service.js';
import { EVERY_ROLE, guarded } from '../auth/roles.js';

export function workspaceRoutes(app: App, workspaces: WorkspaceService): void {
  app.get(
    '/workspaces',
    {
      config: {
        scope: 'any',
        tokenScope: null,
        tokenScopeWhy: { tokens: 'open', why: "a token sees only its own workspace's id, name and dates, which GET /v1/me shows it too" },
      },
      schema: {
        operationId: 'listWorkspaces',
        tags: ['workspaces'],
        summary: "The caller's workspaces (a workspace API token sees its own)",
        description: 'Every workspace the signed-in user is a member of, with their role in each, newest first; a workspace API token sees only its own workspace.',
        headers: requestHeaders(),
        response: { 200: WorkspaceList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => workspaces.list(requestCtx(request)),
  );

  app.get(
    '/workspaces/:id',
    {
      config: {
        scope: 'workspace',
        tokenScope: null,
        tokenScopeWhy: { tokens: 'open', why: "only the token's own workspace answers (its id, name and dates, as GET /v1/me shows); any other id is 404" },
      },
      schema: {
        operationId: 'getWorkspace',
        tags: ['workspaces'],
        summary: 'The workspace the call acts in',
        description: 'One workspace by id: its name and when it was made. The id must be the workspace the credential acts in; another one is 404.',
        headers: requestHeaders(),
        params: WorkspaceParams,
        response: { 200: Workspace, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const ws = await workspaces.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(ws.etag));
      return ws;
    },
  );

  app.patch(
    '/workspaces/:id',
    {
      config: {
        scope: 'workspace',
        ...guarded('workspace.manage'),
        tokenScope: null,
        tokenScopeWhy: { tokens: 'refused', why: 'an owner or admin renames the workspace; a token has no role (7023)' },
        event: 'workspace.updated',
      },
      schema: {
        operationId: 'updateWorkspace',
        tags: ['workspaces'],
        summary: 'Rename the workspace (owner or admin; If-Match)',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: WorkspaceParams,
        body: UpdateWorkspaceBody,
        response: { 200: Workspace, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const ws = await workspaces.rename(workspaceCtx(request), request.params.id, request.body.name, request.headers['if-match']);
      reply.header('etag', quoteEtag(ws.etag));
      return ws;
    },
  );

  app.post(
    '/workspaces',
    {
      config: { scope: 'user', event: 'workspace.created' },
      schema: {
        operationId: 'createWorkspace',
        tags: ['workspaces'],
        summary: 'Make a workspace; the caller is its owner',
        description:
          'Any signed-in user (a session, a cookie or a JWT); a workspace API token has no user: 403 (7024). A user who already owns as many workspaces as one user may (`WSP_WORKSPACES_PER_USER`, 10 by default) is refused: 409 (7065) with `metadata.limit` and `metadata.used`, and nothing is made; handing a workspace over (another owner, then stepping down) or leaving one frees a place.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateWorkspaceBody,
        response: { 201: Workspace, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const ws = await workspaces.create(requestCtx(request), requestCtx(request).actorId, request.body.name);
      reply.header('etag', quoteEtag(ws.etag));
      return reply.code(201).send(ws);
    },
  );

  app.get(
    '/workspaces/:id/members',
    {
      // Members' emails and names: a token needs a scope of its own to read them (issue 48).
      config: { scope: 'workspace', tokenScope: 'members:read' },
      schema: {
        operationId: 'listWorkspaceMembers',
        tags: ['workspaces'],
        summary: "The workspace's members (any member)",
        description: 'The people with access to the workspace: email, name, role and when they joined. Any member may list them.',
        headers: requestHeaders(),
        params: WorkspaceParams,
        querystring: PageQuery(100, 50),
        response: { 200: MemberList, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => workspaces.members(workspaceCtx(request), request.params.id, { limit: request.query.limit, cursor: request.query.cursor }),
  );

  app.patch(
    '/workspaces/:id/members/:user_id',
    {
      config: {
        scope: 'workspace',
        ...guarded('members.manage'),
        tokenScope: null,
        tokenScopeWhy: { tokens: 'refused', why: "an owner or admin changes a member's role; a token has no role (7023)" },
        event: 'member.updated',
      },
      schema: {
        operationId: 'updateWorkspaceMember',
        tags: ['workspaces'],
        summary: "Change a member's role (owner or admin)",
        description: 'Only an owner grants the owner role or takes it away (403 7049); the last owner keeps it (409 7043).',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: MemberParams,
        body: ChangeRoleBody,
        response: { 200: Member, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request) => workspaces.changeRole(workspaceCtx(request), request.params.id, request.params.user_id, request.body.role),
  );

  app.delete(
    '/workspaces/:id/members/:user_id',
    {
      // Every role: a member, a viewer too, may remove themselves (leave), so the service judges the role.
      config: {
        scope: 'workspace',
        roles: EVERY_ROLE,
        tokenScope: null,
        tokenScopeWhy: { tokens: 'refused', why: 'an owner or admin removes a member, or the member themselves; a token is neither (7023)' },
        event: 'member.removed',
      },
      schema: {
        operationId: 'deleteWorkspaceMember',
        tags: ['workspaces'],
        summary: 'Remove a member (owner or admin; anyone may remove themselves)',
        description: "Only an owner removes an owner (403 7049); the last owner stays (409 7043). The user's next request in the workspace is refused, on every server instance.",
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: MemberParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await workspaces.removeMember(workspaceCtx(request), request.params.id, request.params.user_id);
      return reply.code(204).send(null);
    },
  );
}
