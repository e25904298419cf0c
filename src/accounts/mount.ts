import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { nowSeconds } from '../shared/clock.js';
import { createAccountService } from './service.js';
import { accountRoutes } from './routes.js';
import { setupCodeHash } from './setup-code.js';

export function mountAccounts(app: App, deps: ServiceDeps): void {
  accountRoutes(app, createAccountService(deps), {
    secureCookie: deps.config.publicUrl.startsWith('https:'),
    oidcStartUrl: null,
    setupCodeHash: () => setupCodeHash(deps.db),
    now: () => nowSeconds(deps.clock),
  });
}
