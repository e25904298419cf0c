import type { FastifyInstance } from 'fastify';
import { scopeOfRoute } from '../auth/scopes.js';

/**
 * Gives every workspace route of an area the scope an API token needs for it (CONTRACT §12),
 * in its config for the pipeline and in the document (`x-required-scope`, and its description).
 * Routes for users only (a role, or no workspace) need none: tokens cannot call them at all.
 */
export function assignTokenScopes(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.scope !== 'workspace' || route.config?.roles) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const scope = route.config.tokenScope !== undefined ? route.config.tokenScope : scopeOfRoute((route.schema?.tags as string[] | undefined) ?? [], methods);
    route.config = { ...route.config, tokenScope: scope };
    if (!scope || !route.schema) return;
    const note = `API tokens need the scope \`${scope}\` (403, 7025).`;
    route.schema = { ...route.schema, 'x-required-scope': scope, description: route.schema.description ? `${route.schema.description}\n\n${note}` : note } as typeof route.schema;
  });
}
