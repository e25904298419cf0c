import { grants, type TokenScope } from './scopes.js';
import type { Role } from './principal.js';
import { EVERY_ROLE, WRITERS } from './roles.js';
import { ApiError, notFound } from '../shared/errors.js';
import { canonicalId } from '../shared/ids.js';
import type { CredentialLookups } from './authenticator.js';
import { actorIdOf, type Principal, type RequestContext, type WorkspaceContext } from './principal.js';
import type { RequestOrigin } from '../events/record.js';

/** How a route relates to workspaces: acts in one, acts for the user, or either. */
export type Scope = 'workspace' | 'user' | 'any';

/**
 * The spec's rules for choosing the workspace:
 * a workspace API token acts on its own workspace (a matching Service-Context is accepted,
 * any other is 403); a broad credential (session, JWT) names one with Service-Context and
 * must be a member of it (403 otherwise, and 403 without the header). The context is made whole,
 * with the request's `origin`: a property added afterwards moved every request's context to a second
 * hidden class with a property store of its own, and sent objects to the old generation
 * (docs/benchmarks.md, round twelve).
 */
export async function resolveContext(roleOf: CredentialLookups['roleOf'], principal: Principal, serviceContext: string | undefined, scope: Scope, origin: RequestOrigin): Promise<RequestContext> {
  const actorId = actorIdOf(principal);
  const named = serviceContext?.toLowerCase();
  if (scope === 'user') {
    if (principal.kind === 'api_token') throw new ApiError('USER_REQUIRED');
    return { principal, workspaceId: null, role: null, actorId, origin };
  }
  if (principal.kind === 'api_token') {
    if (named !== undefined && named !== principal.workspaceId) {
      throw new ApiError('WORKSPACE_FORBIDDEN', { message: 'Service-Context names a workspace other than the one this token belongs to' });
    }
    return { principal, workspaceId: principal.workspaceId, role: null, actorId, origin };
  }
  if (named === undefined) {
    if (scope === 'any') return { principal, workspaceId: null, role: null, actorId, origin };
    throw new ApiError('SERVICE_CONTEXT_REQUIRED');
  }
  const role = await roleOf(named, principal.userId);
  if (!role) throw new ApiError('WORKSPACE_FORBIDDEN', { message: 'The caller is not a member of the workspace named by Service-Context' });
  return { principal, workspaceId: named, role, actorId, origin };
}

/** For routes API tokens may call with a scope (the pipeline checks it) while users need a role: the audit log, webhooks. */
export function requireRoleOfUser(ctx: RequestContext, roles: readonly Role[]): void {
  if (ctx.principal.kind !== 'api_token') requireRole(ctx, roles);
}

/**
 * The role a route needs (docs/spec-gaps.md, "Roles (issue 50)"): its declared `roles`, else, for
 * a write in a workspace, the writers', so that no write route can forget the viewer. API tokens
 * are judged by their scope (`tokenScope`, checked next) and never a role; a route no token may
 * call (`tokenScope: null` with `roles`) refuses them here as before.
 */
export function requireRouteRole(ctx: RequestContext, route: { scope?: Scope | undefined; roles?: readonly Role[] | undefined; tokenScope?: TokenScope | null | undefined }, write: boolean): void {
  const roles = route.roles ?? (route.scope === 'workspace' && write ? WRITERS : undefined);
  if (!roles) return;
  if (ctx.principal.kind === 'api_token') {
    // A list of every role narrows nobody: the route judges a token itself (removing a member).
    if (route.roles && !route.tokenScope && EVERY_ROLE.some((r) => !route.roles!.includes(r))) requireRole(ctx, route.roles);
    return;
  }
  requireRole(ctx, roles);
}

export function requireRole(ctx: RequestContext, roles: readonly Role[]): void {
  if (ctx.role && roles.includes(ctx.role)) return;
  // A viewer is told so by a code of its own: it reads, and this needs more than reading.
  if (ctx.role === 'viewer') throw new ApiError('VIEWER_READ_ONLY', { message: `A viewer cannot do this: it needs the workspace role ${roles.join(' or ')}` });
  const message = ctx.principal.kind === 'api_token' ? `A workspace API token cannot do this; it needs a user with role ${roles.join(' or ')}` : `This needs the workspace role ${roles.join(' or ')}`;
  throw new ApiError('ROLE_REQUIRED', { message });
}

/**
 * A workspace id in a path (`/v1/workspaces/{id}/...`) must be the workspace the call acts in:
 * any other is not found, as any foreign id. Answers it canonical.
 */
export function pathWorkspace(ctx: WorkspaceContext, rawId: string): string {
  const id = canonicalId('ws', rawId);
  if (id !== ctx.workspaceId) throw notFound('workspace');
  return id;
}

/** An API token acts only within its scopes (docs/spec-gaps.md, "Token scopes"); users are judged by their role. */
export function requireScope(principal: Principal, scope: TokenScope): void {
  if (principal.kind !== 'api_token' || grants(principal.scopes, scope)) return;
  throw new ApiError('SCOPE_REQUIRED', { message: `This API token lacks the scope ${scope}: make a token with it (POST /v1/api_tokens, scopes)`, metadata: { required_scope: scope } });
}
