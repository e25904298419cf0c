/** The wire shapes the dashboard views read (a subset of the SDK's, kept loose where the views only pass them back). */
export type Binding = { mode: 'inherit'; filter_key: string } | { mode: 'fixed'; value: unknown } | { mode: 'unbound' };

interface WidgetCommon {
  widget_id: string;
  position: number;
  title: string | null;
  col_span: 1 | 2 | 3 | 4;
  height: 'compact' | 'standard' | 'tall';
  drill_down: string | null;
  visualization_options: Record<string, unknown>;
  freshness_policy: unknown;
}
export type MetricWidget = WidgetCommon & { widget_type: 'platform_metric'; metric_key: string; metric_version: number; filter_bindings: Record<string, Binding> };
export type SnippetWidget = WidgetCommon & {
  widget_type: 'snippet';
  snippet_id: string;
  snippet_etag: string;
  input_bindings: Record<string, Binding>;
  visualization: string | null;
  refresh_policy: unknown;
  display_type: string | null;
};
export type Widget = MetricWidget | SnippetWidget;

/** A widget being edited: a new one has no id until saved. */
export type DraftWidget = (Omit<MetricWidget, 'widget_id'> | Omit<SnippetWidget, 'widget_id'>) & { widget_id?: string };

export type FilterDefinition = { kind: string; key: string; label?: string; [k: string]: unknown };

export type Drift = { widget_id: string; snippet_id: string; snapshot_etag: string; current_etag: string | null; current_state: 'active' | 'archived' | 'missing'; restore_action: string };

export interface Content {
  name: string;
  description: string | null;
  purpose: 'workspace_overview' | 'custom';
  filter_definitions: FilterDefinition[];
  default_filter_values: Record<string, unknown>;
  widgets: Widget[];
}

export type Dashboard = Content & { id: string; etag: string; current_revision_id: string; created_at: number; updated_at: number };

export interface StructuralDiff {
  version: 1;
  dashboard_fields: string[];
  widgets: {
    added: { count: number; widget_ids: string[] };
    removed: { count: number; widget_ids: string[] };
    changed: { count: number; widgets: { widget_id: string; fields: string[] }[] };
  };
}

export type Revision = Content & {
  id: string;
  dashboard_id: string;
  parent_revision_id: string | null;
  restored_from_revision_id: string | null;
  source: 'manual' | 'automatic' | 'restore' | 'reset' | 'backfill';
  author_id: string;
  summary: string | null;
  structural_diff: StructuralDiff | null;
  snippet_etag_drift: Drift[];
  created_at: number;
};

export type Metric = { key: string; version: number; title: string; unit: string; description: string; kind: 'gauge' | 'counter'; filter_keys: string[] };
