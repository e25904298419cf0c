import type { FastifyInstance } from 'fastify';
import { EVERY_ROLE, PERMISSIONS } from '../auth/roles.js';

/**
 * Holds each route's roles to the guarded action it names (docs/spec-gaps.md, "Roles (issue 50)"):
 * a route narrower than the default (every role reads, writers write) names its `permission`,
 * whose roles and token scope must be its own. So the permissions `GET /v1/me` lists, read from
 * src/auth/roles.ts, are what the routes do; a route that differs stops start-up. The document
 * shows each (`x-roles`, `x-permission`, a sentence of the description).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function checkRouteRoles(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    const config = route.config;
    const roles = config?.roles;
    const permission = config?.permission;
    const where = `${(Array.isArray(route.method) ? route.method : [route.method]).join(',')} ${route.url}`;
    if (permission !== undefined) {
      const declared = PERMISSIONS[permission];
      if (!declared || permission === 'write') throw new Error(`${where} names the permission ${String(permission)}, which is not a guarded action of src/auth/roles.ts`);
      if (!roles || roles.length !== declared.roles.length || declared.roles.some((r) => !roles.includes(r))) {
        throw new Error(`${where} names the permission ${permission} but its roles are not ${declared.roles.join(', ')}: spread \`...guarded('${permission}')\``);
      }
      if ((config?.tokenScope ?? null) !== declared.scope) {
        throw new Error(
          `${where} names the permission ${permission}, which a token holds ${declared.scope ? `with the scope ${declared.scope}` : 'never'}: its tokenScope must be ${String(declared.scope)}`,
        );
      }
    } else if (roles && EVERY_ROLE.some((r) => !roles.includes(r))) {
      throw new Error(`${where} allows only the roles ${roles.join(', ')}: name the guarded action (\`...guarded('<permission>')\`, src/auth/roles.ts) so GET /v1/me can list it`);
    }
    if (!route.schema || !roles) return;
    const note = permission ? `Users need the role ${roles.join(' or ')} (the permission \`${permission}\` of \`GET /v1/me\`).` : 'Any member of the workspace may call this, a viewer included.';
    route.schema = {
      ...route.schema,
      'x-roles': roles,
      ...(permission ? { 'x-permission': permission } : {}),
      description: route.schema.description ? `${route.schema.description}\n\n${note}` : note,
    } as typeof route.schema;
  });
}
