import type { FastifyRequest } from 'fastify';
import type { RequestContext, WorkspaceContext } from '../auth/principal.js';
import { ApiError } from '../shared/errors.js';

/** The request context of a route declared with `scope: 'workspace'`. */
export function workspaceCtx(request: FastifyRequest): WorkspaceContext {
  const ctx = request.ctx;
  if (!ctx || ctx.workspaceId === null) throw new ApiError('INTERNAL', { message: 'route has no workspace scope' });
  return ctx as WorkspaceContext;
}

/** The request context of a route declared with `scope: 'user'` or `'any'`. */
export function requestCtx(request: FastifyRequest): RequestContext {
  if (!request.ctx) throw new ApiError('INTERNAL', { message: 'route has no scope' });
  return request.ctx;
}

/** Lets a handler store something other than its response for replays (a token's plaintext is never replayed). */
export function storeForReplayInstead(request: FastifyRequest, status: number, body: unknown): void {
  if (request.idem) request.idem.override = { status, body };
}
