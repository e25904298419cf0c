import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { nowSeconds } from '../shared/clock.js';
import { createAccountService } from './service.js';
import { accountRoutes } from './routes.js';
import { setupCodeHashes } from './setup-code.js';
import { createOidc } from './oidc.js';

export function mountAccounts(app: App, deps: ServiceDeps): void {
  accountRoutes(app, createAccountService(deps), {
    secureCookie: deps.config.publicUrl.startsWith('https:'),
    oidc: deps.config.oidc ? createOidc({ db: deps.db, clock: deps.clock, sessions: deps.config.sessions, publicUrl: deps.config.publicUrl, settings: deps.config.oidc, events: deps.events }) : null,
    setupCodeHashes: () => setupCodeHashes(deps.db),
    now: () => nowSeconds(deps.clock),
  });
}
