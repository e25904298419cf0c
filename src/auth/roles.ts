/**
 * Who may do what in a workspace (docs/spec-gaps.md, "Roles (issue 50)"). Users are
 * judged by their membership's role, API tokens by their scopes and never a role: a guarded
 * action of a route a token can reach needs the area's write scope, which the route declares as
 * its `tokenScope`.
 *
 * Each guarded action is a permission, named here with the roles that hold it and the scope a
 * token needs for it. A route declares `roles` and `permission` (`...guarded('secrets.delete')`);
 * start-up refuses a route whose roles differ from its permission's (src/http/route-roles.ts), so
 * what `GET /v1/me` says a caller may do is what the routes let it do.
 */
import type { RequestContext, Role } from './principal.js';
import { grants, type TokenScope } from './scopes.js';

export const EVERY_ROLE: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];
/** Who writes: every route of a workspace that is not a GET allows them unless it says otherwise. */
export const WRITERS: readonly Role[] = ['owner', 'admin', 'member'];
export const MANAGERS: readonly Role[] = ['owner', 'admin'];

/**
 * The guarded actions. `write` is the default of every workspace write (a viewer has none of
 * them); the others are declared by their routes. `scope`: what a token needs for it (`null`:
 * a token never has it, the route refuses tokens).
 */
export const PERMISSIONS = {
  write: { roles: WRITERS, scope: null, routes: 'every POST, PUT, PATCH and DELETE of a workspace that names no other permission' },
  'secrets.access': { roles: WRITERS, scope: 'secrets:access' },
  'secret_versions.destroy': { roles: MANAGERS, scope: 'secrets:write' },
  'secrets.delete': { roles: MANAGERS, scope: 'secrets:write' },
  'machines.delete': { roles: MANAGERS, scope: 'compute:write' },
  'compute_configs.delete': { roles: MANAGERS, scope: 'compute:write' },
  'clusters.delete': { roles: MANAGERS, scope: 'compute:write' },
  'installs.delete': { roles: MANAGERS, scope: 'installs:write' },
  'packages.delete': { roles: MANAGERS, scope: 'installs:write' },
  'repository_change_requests.approve': { roles: WRITERS, scope: null },
  'webhooks.manage': { roles: MANAGERS, scope: 'webhooks:write' },
  'webhooks.read': { roles: MANAGERS, scope: 'webhooks:read' },
  'audit.read': { roles: MANAGERS, scope: 'audit:read' },
  'members.manage': { roles: MANAGERS, scope: null },
  'invitations.manage': { roles: MANAGERS, scope: null },
  'invitations.read': { roles: MANAGERS, scope: 'members:read' },
  'api_tokens.manage': { roles: MANAGERS, scope: null },
  'workspace.manage': { roles: MANAGERS, scope: null },
} as const satisfies Record<string, { roles: readonly Role[]; scope: TokenScope | null; routes?: string }>;

export type Permission = keyof typeof PERMISSIONS;
export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

/** A route's role policy for a guarded action: spread into its `config`. */
export function guarded(permission: Exclude<Permission, 'write'>): { roles: readonly Role[]; permission: Permission } {
  return { roles: PERMISSIONS[permission].roles, permission };
}

/** The permissions a role holds in a workspace, in the table's order. */
export function permissionsOfRole(role: Role): Permission[] {
  return PERMISSION_NAMES.filter((p) => PERMISSIONS[p].roles.includes(role));
}

/**
 * The permissions a workspace API token holds: those whose scope it has; `write` when it has any
 * write scope. Actions no token may take (`scope: null`) never.
 */
export function permissionsOfToken(scopes: readonly TokenScope[] | null): Permission[] {
  return PERMISSION_NAMES.filter((p) => {
    if (p === 'write') return scopes === null || scopes.some((s) => s.endsWith(':write'));
    const scope: TokenScope | null = PERMISSIONS[p].scope;
    return scope !== null && grants(scopes, scope);
  });
}

/**
 * Whether the caller holds a permission besides the one its route checked: a user by the role in
 * the call's workspace, a token by its scopes. For an answer whose parts belong to two
 * permissions (a webhook attempt's body is an audit event: docs/spec-gaps.md, "Webhooks").
 */
export function holds(ctx: Pick<RequestContext, 'principal' | 'role'>, permission: Permission): boolean {
  if (ctx.principal.kind === 'api_token') return permissionsOfToken(ctx.principal.scopes).includes(permission);
  return ctx.role !== null && PERMISSIONS[permission].roles.includes(ctx.role);
}
