import type { FastifyInstance } from 'fastify';
import { TOKEN_SCOPES } from '../auth/scopes.js';

/**
 * Holds every route a workspace API token can reach to the token scope it declares (docs/spec-gaps.md, "Token scopes"):
 * `config.tokenScope`, or `tokenScope: null` with `tokenScopeWhy`. A route that declares nothing
 * stops start-up, so no route is ever open to tokens by omission; nothing is filled in here.
 * Tokens cannot reach routes without a credential (`auth: 'none'`) or for users only
 * (`scope: 'user'`, 403 7024), so those declare nothing. The document shows each declaration
 * (`x-required-scope`, `x-token-scope-why`, and a sentence of the description), and the security
 * suite calls every operation of it with a token of no scope.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function checkTokenScopes(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    const config = route.config;
    if (config?.auth === 'none' || config?.scope === 'user') return;
    const where = `${(Array.isArray(route.method) ? route.method : [route.method]).join(',')} ${route.url}`;
    const scope = config?.tokenScope;
    const why = config?.tokenScopeWhy;
    if (scope === undefined) {
      throw new Error(
        `${where} declares no token scope: an API token can reach it, so its config needs \`tokenScope: '<area>:read'\` (or another scope of src/auth/scopes.ts), or \`tokenScope: null\` with \`tokenScopeWhy: { tokens: 'refused' | 'open', why }\``,
      );
    }
    if (scope === null) {
      if (!why || (why.tokens !== 'refused' && why.tokens !== 'open') || why.why.trim() === '')
        throw new Error(`${where} declares \`tokenScope: null\` without \`tokenScopeWhy: { tokens: 'refused' | 'open', why }\``);
      // A role is a user's: the pipeline refuses every token before any scope is looked at.
      if (config?.roles && why.tokens !== 'refused') throw new Error(`${where} needs a role, which no API token has: its \`tokenScopeWhy.tokens\` is 'refused'`);
    } else {
      if (!(TOKEN_SCOPES as readonly string[]).includes(scope)) throw new Error(`${where} declares the token scope ${String(scope)}, which is not one of ${TOKEN_SCOPES.join(', ')}`);
      if (why) throw new Error(`${where} declares a token scope and \`tokenScopeWhy\`: the reason goes only with \`tokenScope: null\``);
    }
    if (!route.schema) return;
    const note =
      scope !== null
        ? `API tokens need the scope \`${scope}\` (403, 7025).`
        : why!.tokens === 'open'
          ? `Any API token of the workspace may call this, whatever its scopes, since ${why!.why}.`
          : `API tokens cannot call this: ${why!.why}.`;
    route.schema = {
      ...route.schema,
      'x-required-scope': scope,
      ...(scope === null ? { 'x-token-scope-why': { tokens: why!.tokens, why: why!.why } } : {}),
      description: route.schema.description ? `${route.schema.description}\n\n${note}` : note,
    } as typeof route.schema;
  });
}
