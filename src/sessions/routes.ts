import type { App } from '../http/fastify-types.js';
import { clearedSessionCookie } from '../http/cookies.js';
import { errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { requestCtx } from '../http/context.js';
import { ApiError } from '../shared/errors.js';
import type { Principal } from '../auth/principal.js';
import { ListSessionsQuery, SessionIdParams, SessionList } from './schemas.js';
import type { SessionService } from './service.js';

/** A user credential's user (scope 'user' has already refused workspace API tokens). */
const userOf = (p: Principal) => (p.kind === 'api_token' ? '' : p.userId);

/** docs/spec-gaps.md, "Accounts and sign-in": a person sees the sessions they hold and ends any of them. */
export function sessionRoutes(app: App, sessions: SessionService, opts: { secureCookie: boolean }): void {
  app.get(
    '/sessions',
    {
      config: { scope: 'user' },
      schema: {
        operationId: 'listSessions',
        tags: ['sessions'],
        summary: "The caller's own sessions, newest first",
        description: 'Live sessions only; `current` marks the one making the request. Never shows a token. A workspace API token has no user: 403 (7024).',
        headers: requestHeaders(),
        querystring: ListSessionsQuery,
        response: { 200: SessionList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => {
      const p = requestCtx(request).principal;
      return sessions.list(userOf(p), p.kind === 'session' ? p.sessionId : null, { limit: request.query.limit, cursor: request.query.cursor });
    },
  );

  app.delete(
    '/sessions/current',
    {
      config: { scope: 'user', event: 'session.revoked', operationIdWhy: "`current` names the caller's own session, not a resource under sessions" },
      schema: {
        operationId: 'deleteCurrentSession',
        tags: ['sessions'],
        summary: 'Revoke the calling session at once',
        description: 'Only a session can revoke itself; other credentials get 403. A cookie session also has its cookie cleared.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        response: { 204: NoContent, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => {
      const p = requestCtx(request).principal;
      if (p.kind !== 'session') throw new ApiError('FORBIDDEN', { message: 'Only a session token can be revoked this way' });
      await sessions.endCurrent(requestCtx(request), p.sessionId);
      if (p.cookie) reply.header('set-cookie', clearedSessionCookie(opts.secureCookie));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/sessions/:id',
    {
      config: { scope: 'user', event: 'session.revoked' },
      schema: {
        operationId: 'deleteSession',
        tags: ['sessions'],
        summary: "Revoke one of the caller's sessions",
        description: "Its token is refused from the next request on. Another user's session is 404, as an unknown id.",
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: SessionIdParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      await sessions.revoke(requestCtx(request), userOf(requestCtx(request).principal), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
