import formbody from '@fastify/formbody';
import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { createAuthenticator } from '../auth/authenticator.js';
import { nowSeconds } from '../shared/clock.js';
import { FixedWindowLimiter } from '../http/rate-limit.js';
import { createDeviceService } from './service.js';
import { approvalRoutes } from './routes.js';
import { metadataRoute, oauthEndpointRoutes } from './endpoint-routes.js';
import { devicePageRoutes } from './page-routes.js';
import { deviceStore, guessLimitStore } from './store.js';
import { GUESS_WINDOW_SECONDS } from './guess-limiter.js';

/** Expired logins answer expired_token for an hour more, then are gone (invalid_grant). */
const KEEP_EXPIRED_SECONDS = 3600;

/**
 * Device authorization (RFC 8628, CONTRACT §2). Mounted at the root, not under /v1: the
 * `/device` page and `/.well-known/oauth-authorization-server` live outside it. Form bodies
 * are parsed only in the inner scope of the OAuth endpoints and the page, so every other route
 * still refuses them with 415.
 */
export async function registerDeviceAuthorization(app: App, deps: ServiceDeps): Promise<void> {
  const devices = createDeviceService(deps);
  // The page takes session tokens only: a JWT holder approves through the API.
  const authenticateSession = createAuthenticator({ db: deps.db, clock: deps.clock, verifyJwt: async () => null });

  metadataRoute(app, deps.config.publicUrl);
  approvalRoutes(app, devices);
  await app.register(async (forms) => {
    await forms.register(formbody);
    oauthEndpointRoutes(forms as unknown as App, devices);
    devicePageRoutes(forms as unknown as App, devices, authenticateSession, new FixedWindowLimiter(deps.clock, deps.config.authFailuresPerMinute));
  });

  deps.jobs.register(
    'oauth.purge_device_logins',
    async () => {
      const now = nowSeconds(deps.clock);
      const logins = await deviceStore.purgeExpiredBefore(deps.db, now - KEEP_EXPIRED_SECONDS);
      const windows = await guessLimitStore.purgeWindowsBefore(deps.db, now - GUESS_WINDOW_SECONDS);
      return { device_logins: logins, guess_windows: windows };
    },
    { maxAttempts: 1 },
  );
  deps.jobs.every('oauth.purge_device_logins', 3600);
}
