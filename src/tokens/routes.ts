import type { App } from '../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { storeForReplayInstead, workspaceCtx } from '../http/context.js';
import type { FastifyRequest } from 'fastify';
import { ApiError, envelope, validationError } from '../shared/errors.js';
import { CreatedToken, CreateTokenBody, ListTokensQuery, TokenIdParams, TokenList } from './schemas.js';
import { TOKEN_LIST_PREFIX, tokenListName, type TokenService } from './service.js';
import { guarded } from '../auth/roles.js';

/** Token management is a person's: docs/spec-gaps.md, "Credentials and tokens" lets no token make or revoke tokens. */
const NO_TOKEN = { tokenScope: null, tokenScopeWhy: { tokens: 'refused', why: 'an owner or admin makes and revokes tokens; a token has no role, so no token can make another (7023)' } } as const;

/** The part of CreateTokenBody a schema cannot say: `expires_at` is in the future (the route's `config.validate`). */
export function expiresInFuture(request: FastifyRequest, now: number): void {
  const expiresAt = (request.body as CreateTokenBody).expires_at;
  if (expiresAt !== undefined && expiresAt !== null && expiresAt <= now) {
    throw validationError(['body', 'expires_at'], 'expires_at must be in the future (Unix seconds)');
  }
}

export function tokenRoutes(app: App, tokens: TokenService): void {
  app.post(
    '/api_tokens',
    {
      config: { scope: 'workspace', ...guarded('api_tokens.manage'), ...NO_TOKEN, validate: expiresInFuture, event: 'api_token.created' },
      schema: {
        operationId: 'createApiToken',
        tags: ['tokens'],
        summary: 'Create a workspace API token (owner or admin)',
        description:
          'The `token` is returned only in this response. A retry with the same Idempotency-Key answers 409 with `metadata.token_id`, never the plaintext again. A workspace holding as many live tokens as its quota (WSP_QUOTA_API_TOKENS): 409, code 7041, `metadata.limit`.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateTokenBody,
        response: { 201: CreatedToken, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const created = await tokens.create(workspaceCtx(request), request.body);
      const replay = new ApiError('TOKEN_NOT_REPLAYED', { metadata: { token_id: created.id } });
      storeForReplayInstead(request, replay.status, envelope(replay.entries));
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/api_tokens',
    {
      config: {
        scope: 'workspace',
        tokenScope: 'tokens:read',
        listVersion: (request) => tokenListName(workspaceCtx(request).workspaceId),
        listWithCredential: { of: 'workspace', lists: TOKEN_LIST_PREFIX },
      },
      schema: {
        operationId: 'listApiTokens',
        tags: ['tokens'],
        summary: "List the workspace's API tokens, newest first",
        description: 'Never shows a token or its hash: only its first 12 characters (`prefix`).',
        headers: requestHeaders(),
        querystring: ListTokensQuery,
        response: { 200: TokenList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => tokens.list(workspaceCtx(request), request.query.limit, request.query.cursor),
  );

  app.delete(
    '/api_tokens/:id',
    {
      config: { scope: 'workspace', ...guarded('api_tokens.manage'), ...NO_TOKEN, event: 'api_token.revoked' },
      schema: {
        operationId: 'deleteApiToken',
        tags: ['tokens'],
        summary: 'Revoke a workspace API token (owner or admin)',
        description: 'The token is deleted at once; the very next request with it is 401.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: TokenIdParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await tokens.revoke(workspaceCtx(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
