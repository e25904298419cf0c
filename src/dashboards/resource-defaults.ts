import { ApiError, ErrorCodes, type ErrorEntry } from '../shared/errors.js';
import { canonicalId } from '../shared/ids.js';
import type { DashboardContent } from './schemas/content.js';

/** What the defaults of `cluster` and `region` resources may name (src/compute/resource-names.ts). */
export interface ResourceNames {
  clusters(workspaceId: string, ids: string[]): Promise<Set<string>>;
  regions(): Promise<string[]>;
}

type Checked = 'cluster' | 'region';

/**
 * docs/spec-gaps.md, "Clusters and regions": a `cluster` or `region` resource variable takes the ids of GET /v1/clusters and
 * GET /v1/regions, so a default that names none of the workspace's is a 422 at its own path,
 * naming what it may be; so is a default filter value of a `cluster` or `region` resource filter
 * or variable. Other kinds are not checked (products do not exist yet; installs and packages are
 * left as before). Only what the write sets is checked: a revision restored or a dashboard left
 * untouched may still name a cluster deleted since (docs/spec-gaps.md, "Clusters and regions").
 */
export async function assertResourceDefaults(
  names: ResourceNames,
  workspaceId: string,
  content: Pick<DashboardContent, 'filter_definitions' | 'default_filter_values'>,
  set: { filter_definitions: boolean; default_filter_values: boolean },
): Promise<void> {
  const wanted: { kind: Checked; value: string; path: string[] }[] = [];
  const kindOfKey = new Map<string, Checked>();
  content.filter_definitions.forEach((f, i) => {
    if (f.kind === 'resource' && (f.resource === 'cluster' || f.resource === 'region')) kindOfKey.set(f.key, f.resource);
    if (f.kind === 'variable' && f.input.kind === 'resource' && (f.input.resource === 'cluster' || f.input.resource === 'region')) {
      const kind: Checked = f.input.resource;
      kindOfKey.set(f.key, kind);
      const d = f.input.default;
      if (set.filter_definitions && d !== undefined) {
        const values = Array.isArray(d) ? d : [d];
        values.forEach((v, j) => wanted.push({ kind, value: v, path: ['body', 'filter_definitions', String(i), 'input', 'default', ...(Array.isArray(d) ? [String(j)] : [])] }));
      }
    }
  });
  if (set.default_filter_values || set.filter_definitions) {
    for (const [key, v] of Object.entries(content.default_filter_values ?? {})) {
      const kind = kindOfKey.get(key);
      if (!kind) continue;
      const values = Array.isArray(v) ? v : [v];
      values.forEach((value, j) => {
        if (typeof value === 'string') wanted.push({ kind, value, path: ['body', 'default_filter_values', key, ...(Array.isArray(v) ? [String(j)] : [])] });
      });
    }
  }
  if (wanted.length === 0) return;
  const clusterIds = wanted.filter((w) => w.kind === 'cluster').map((w) => canonicalId('cl', w.value));
  const clusters = clusterIds.length > 0 ? await names.clusters(workspaceId, clusterIds) : new Set<string>();
  const regions = wanted.some((w) => w.kind === 'region') ? new Set(await names.regions()) : new Set<string>();
  const entries: ErrorEntry[] = [];
  for (const w of wanted) {
    const ok = w.kind === 'cluster' ? clusters.has(canonicalId('cl', w.value)) : regions.has(w.value);
    if (ok) continue;
    const message =
      w.kind === 'cluster'
        ? `${JSON.stringify(w.value)} is not a cluster of the workspace (GET /v1/clusters lists them)`
        : `${JSON.stringify(w.value)} is not a region; the regions: ${[...regions].join(', ')}`;
    entries.push({ code: ErrorCodes.VALIDATION_FAILED.code, message, path: w.path });
  }
  if (entries.length > 0) throw new ApiError('VALIDATION_FAILED', { entries });
}
