import type { App } from '../../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../../http/schemas.js';
import { notFound } from '../../shared/errors.js';
import { duringRequest } from '../provider/errors.js';
import { CATALOG_TTL_SECONDS, type CatalogSource } from '../catalog.js';
import { Region, RegionList, RegionParams } from './schemas.js';

const FRESHNESS = `Read from the provider with GET /v1/compute/catalog and kept as long (${CATALOG_TTL_SECONDS} s). 503 with Retry-After when the provider cannot answer.`;

/** The provider's locations as the platform's regions (docs/spec-gaps.md, "Clusters and regions"): nothing stored, the catalog's read reused. */
export function regionRoutes(app: App, catalog: CatalogSource): void {
  app.get(
    '/regions',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'listRegions',
        tags: ['compute'],
        summary: 'The regions a cluster or compute config may name, with the server types offered in each',
        description: `Every location of the compute provider, in one page. ${FRESHNESS}`,
        headers: requestHeaders(),
        response: { 200: RegionList, ...errorResponses(401, 403, 422, 503) },
      },
    },
    async () => ({ data: await duringRequest(() => catalog.regions()), has_more: false, next_cursor: null }),
  );

  app.get(
    '/regions/:id',
    {
      config: { scope: 'workspace', tokenScope: 'compute:read' },
      schema: {
        operationId: 'getRegion',
        tags: ['compute'],
        summary: 'A region',
        description: `404 (7002) for a location the provider does not have. ${FRESHNESS}`,
        headers: requestHeaders(),
        params: RegionParams,
        response: { 200: Region, ...errorResponses(401, 403, 404, 422, 503) },
      },
    },
    async (request) => {
      const region = (await duringRequest(() => catalog.regions())).find((r) => r.id === request.params.id);
      if (!region) throw notFound('region');
      return region;
    },
  );
}
