/**
 * Pickers for a dashboard's resource filters and resource variables (docs/spec-gaps.md, "Clusters and regions"): the
 * workspace's clusters, regions, installs and packages listed by name, each option's value the
 * id the API takes. Products do not exist yet, so their picker says so and offers nothing.
 */
import { useContext } from 'preact/hooks';
import type { Dashboard, Schemas } from '@workspace-platform/sdk';
import { api } from '../../api.js';
import { SessionContext } from '../../session.js';
import type { inputProps } from '../../components.js';
import { useLoad } from '../../hooks.js';

export type ResourceKind = Schemas['ResourceFilter']['resource'];

export interface ResourceOption {
  value: string;
  label: string;
}

type Options = { data?: ResourceOption[]; error?: unknown };

/** The first page (100) of each list: a workspace's clusters, installs and packages are named in one select. */
async function optionsOf(kind: ResourceKind): Promise<Options> {
  const query = { limit: 100 };
  switch (kind) {
    case 'cluster': {
      const res = await api.GET('/v1/clusters', { params: { query } });
      return res.data ? { data: res.data.data.map((c) => ({ value: c.id, label: `${c.name} (${c.region ?? 'any region'})` })) } : { error: res.error };
    }
    case 'region': {
      const res = await api.GET('/v1/regions', {});
      return res.data ? { data: res.data.data.map((r) => ({ value: r.id, label: `${r.city} (${r.id})` })) } : { error: res.error };
    }
    case 'install': {
      const res = await api.GET('/v1/installs', { params: { query } });
      return res.data ? { data: res.data.data.map((i) => ({ value: i.id, label: i.name })) } : { error: res.error };
    }
    case 'package': {
      const res = await api.GET('/v1/packages', { params: { query } });
      return res.data ? { data: res.data.data.map((p) => ({ value: p.id, label: p.name })) } : { error: res.error };
    }
    case 'product':
      return { data: [] };
  }
}

/** A resource kind's options as a select lists them; null while loading. */
export function useResourceOptions(kind: ResourceKind) {
  const me = useContext(SessionContext);
  return useLoad(() => optionsOf(kind), [kind, me?.workspace?.id]);
}

/** What a select reads for "none chosen", by kind. */
const ALL: Record<ResourceKind, string> = { cluster: 'All clusters', region: 'All regions', install: 'All installs', package: 'All packages', product: 'All products' };

/**
 * A select of one kind's resources by name. `value` '' is "all" (or `emptyLabel`); a value no
 * longer listed (a deleted cluster a dashboard still names) stays on screen as its id, marked.
 */
export function ResourceSelect({
  kind,
  value,
  onChange,
  emptyLabel,
  selectProps = {},
}: {
  kind: ResourceKind;
  value: string;
  onChange: (value: string) => void;
  emptyLabel?: string;
  selectProps?: Partial<ReturnType<typeof inputProps>>;
}) {
  const load = useResourceOptions(kind);
  if (kind === 'product') {
    return (
      <select {...selectProps} disabled>
        <option value="">none yet</option>
      </select>
    );
  }
  const options = load.data ?? [];
  const missing = value !== '' && load.data !== null && !options.some((o) => o.value === value);
  return (
    <select {...selectProps} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
      <option value="">{emptyLabel ?? ALL[kind]}</option>
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
      {missing && <option value={value}>{value} (not found)</option>}
      {load.data === null && value !== '' && <option value={value}>{value}</option>}
    </select>
  );
}

/** A filter of the dashboard that picks a resource: a resource filter, or a variable whose input is a resource. */
export interface PickableFilter {
  key: string;
  kind: ResourceKind;
  label: string;
  /** The variable's own default, when it has one. */
  fallback?: string | string[] | undefined;
}

export function pickableFilters(d: Pick<Dashboard, 'filter_definitions'>): PickableFilter[] {
  return d.filter_definitions.flatMap((f): PickableFilter[] => {
    if (f.kind === 'resource') return [{ key: f.key, kind: f.resource, label: f.label }];
    if (f.kind === 'variable' && f.input.kind === 'resource') return [{ key: f.key, kind: f.input.resource, label: f.input.label, fallback: f.input.default }];
    return [];
  });
}

/**
 * One value of a filter as a select shows it: a string as it is; a list of one as its item;
 * anything else (several, or none) as "all". A multiple-valued variable is picked one at a time.
 */
export const single = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) && v.length === 1 && typeof v[0] === 'string' ? v[0] : '');
