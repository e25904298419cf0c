import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { duringRequest } from './provider/errors.js';
import { CATALOG_TTL_SECONDS, type CatalogSource } from './catalog.js';
import { ComputeCatalog } from './catalog-schemas.js';

export function catalogRoutes(app: App, catalog: CatalogSource): void {
  app.get(
    '/compute/catalog',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'getComputeCatalog',
        tags: ['compute'],
        summary: 'What the compute provider offers: regions, images and server types with their prices',
        description: `The values a compute config (\`region\`, \`image\`, \`machine_type_filter\`) and a machine (\`server_type\`) may name. Read from the provider and kept for ${CATALOG_TTL_SECONDS} s. 503 with Retry-After when the provider cannot answer.`,
        headers: requestHeaders(),
        response: { 200: ComputeCatalog, ...errorResponses(401, 403, 422, 503) },
      },
    },
    async () => duringRequest(() => catalog.get()),
  );
}
