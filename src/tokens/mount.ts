import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createTokenService } from './service.js';
import { tokenRoutes } from './routes.js';

export function mountTokens(app: App, deps: ServiceDeps): void {
  tokenRoutes(app, createTokenService(deps));
}
