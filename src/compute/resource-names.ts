/**
 * What a dashboard's defaults may name of the compute area (docs/spec-gaps.md, "Clusters and regions"): the workspace's
 * clusters and the provider's regions. Given to the dashboards area by its mount, so that area
 * names none of these tables and holds no provider client.
 */
import type { ServiceDeps } from '../service-deps.js';
import { duringRequest } from './provider/errors.js';
import { computeDeps } from './compute-deps.js';
import { existingClusterIds } from './clusters/placement.js';

export interface ComputeResourceNames {
  /** Of `ids` (canonical), those the workspace has as clusters. */
  clusters(workspaceId: string, ids: string[]): Promise<Set<string>>;
  /** The provider's region ids (the catalog's freshness; 503 when the provider cannot answer). */
  regions(): Promise<string[]>;
}

export function computeResourceNames(deps: ServiceDeps): ComputeResourceNames {
  const area = computeDeps(deps);
  return {
    clusters: (workspaceId, ids) => existingClusterIds(deps.db, workspaceId, ids),
    regions: async () => (await duringRequest(() => area.catalog.regions())).map((r) => r.id),
  };
}
