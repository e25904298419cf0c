import type { DashboardContent } from './schemas/content.js';
import type { Widget } from './schemas/widgets.js';

type Layout = Pick<DashboardContent, 'filter_definitions' | 'default_filter_values' | 'widgets'>;

const metric = (widget_id: string, position: number, title: string, metric_key: string, col_span: 1 | 2 | 3 | 4, fixed: Record<string, string> = {}): Widget => ({
  widget_id,
  widget_type: 'platform_metric',
  position,
  title,
  col_span,
  height: 'standard',
  drill_down: null,
  visualization_options: {},
  freshness_policy: { mode: 'provider_default' },
  metric_key,
  metric_version: 1,
  filter_bindings: {
    time: { mode: 'inherit', filter_key: 'time' },
    ...(metric_key.startsWith('machines_') || metric_key === 'monthly_cost_cents' ? { cluster: { mode: 'inherit', filter_key: 'cluster' } } : {}),
    ...Object.fromEntries(Object.entries(fixed).map(([k, value]) => [k, { mode: 'fixed', value }])),
  },
});

/**
 * The built-in layout of a `workspace_overview` dashboard, what `:reset` brings back. Its
 * widget ids are fixed, so the diff of a reset names exactly the widgets it brings back or
 * drops, and a second reset changes nothing.
 */
export function defaultOverviewLayout(): Layout {
  return {
    filter_definitions: [
      { kind: 'time', key: 'time', label: 'Time range' },
      { kind: 'comparison', key: 'comparison', label: 'Compare with' },
      { kind: 'resource', key: 'cluster', resource: 'cluster', label: 'Cluster' },
    ],
    default_filter_values: { time: { from: -86400, to: 0 }, comparison: 'previous_period' },
    widgets: [
      metric('wdg_overview_machines_running', 0, 'Running machines', 'machines_running', 2),
      metric('wdg_overview_machines_suspended', 1, 'Suspended machines', 'machines_suspended', 2),
      metric('wdg_overview_render_failures', 2, 'Failed renders', 'renders', 2, { status: 'failed' }),
      metric('wdg_overview_monthly_cost', 3, 'Snapshots, cents a month', 'monthly_cost_cents', 2),
    ],
  };
}
