import formbody from '@fastify/formbody';
import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createAuthenticator } from '../auth/authenticator.js';
import { FixedWindowLimiter } from '../http/rate-limit.js';
import { createDeviceService } from './service.js';
import { approvalRoutes } from './routes.js';
import { metadataRoute, oauthEndpointRoutes } from './endpoint-routes.js';
import { devicePageRoutes } from './page-routes.js';
import { createAccountService } from '../accounts/service.js';
import { identity } from '../identity/service.js';
import { nowSeconds } from '../shared/clock.js';

/**
 * Device authorization (RFC 8628, docs/spec-gaps.md, "Credentials and tokens"). Mounted at the root, not under /v1: the
 * `/device` page and `/.well-known/oauth-authorization-server` live outside it. Form bodies
 * are parsed only in the inner scope of the OAuth endpoints and the page, so every other route
 * still refuses them with 415. Its housekeeping job: ./job-definitions.ts.
 */
export function mountOauth(app: App, deps: ServiceDeps): void {
  const devices = createDeviceService(deps);
  // The page takes the session cookie only: a JWT holder approves through the API.
  const authenticateSession = createAuthenticator({ clock: deps.clock, verifyJwt: async () => null, lookups: deps.credentials });
  const accounts = createAccountService(deps);

  metadataRoute(app, deps.config.publicUrl);
  approvalRoutes(app, devices);
  app.register(async (forms) => {
    await forms.register(formbody);
    oauthEndpointRoutes(forms, devices);
    devicePageRoutes(forms, {
      devices,
      authenticate: authenticateSession,
      authFailures: new FixedWindowLimiter(deps.clock, deps.config.authFailuresPerMinute),
      signIn: (email, password, client) => accounts.signIn({ email, password }, client),
      whoIs: async (userId) => {
        const user = await identity.user(deps.db, userId);
        return user?.email ?? user?.name ?? userId;
      },
      secureCookie: deps.config.publicUrl.startsWith('https:'),
      publicOrigin: new URL(deps.config.publicUrl).origin,
      oidcStartUrl: deps.config.oidc ? '/v1/auth/oidc/start' : null,
      now: () => nowSeconds(deps.clock),
    });
  });
}
