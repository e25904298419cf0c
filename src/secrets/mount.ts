import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createSecretService } from './service.js';
import { secretRoutes } from './routes.js';

export function mountSecrets(app: App, deps: ServiceDeps): void {
  const secrets = createSecretService(deps);
  secretRoutes(app, secrets);
  // A master key this database was not set up with stops the start, with a clear message.
  app.addHook('onReady', secrets.verifyMasterKey);
}
