import type { DashboardContent } from '../../src/dashboards/schemas/content.js';
import type { DashboardField, WidgetField } from '../../src/dashboards/schemas/revision.js';
import type { Widget } from '../../src/dashboards/schemas/widgets.js';

/**
 * Edits that always change the value they touch and keep it valid: the property test knows
 * by construction which fields of a pair differ.
 */

type Any = Record<string, any>;

const toggleKey = (o: Any): Any => ('__edited' in o ? Object.fromEntries(Object.entries(o).filter(([k]) => k !== '__edited')) : { ...o, __edited: true });
const cycle = <T>(values: readonly T[], v: T): T => values[(values.indexOf(v) + 1) % values.length]!;
const otherString = (s: string, max: number) => (s.length < max ? `${s}x` : `${s.slice(0, -1)}${s.endsWith('x') ? 'y' : 'x'}`);

export const dashboardEdits: Record<DashboardField, (c: DashboardContent) => unknown> = {
  name: (c) => otherString(c.name, 100),
  description: (c) => (c.description === null ? 'Edited' : null),
  purpose: (c) => (c.purpose === 'custom' ? 'workspace_overview' : 'custom'),
  filter_definitions: (c) => (c.filter_definitions.length > 0 ? c.filter_definitions.slice(0, -1) : [{ kind: 'time', key: 'time', label: 'Time' }]),
  default_filter_values: (c) => toggleKey(c.default_filter_values),
};

/** Edits of the fields every widget has, and of each type's own. */
export const widgetEdits: Partial<Record<WidgetField, (w: Any) => unknown>> = {
  position: (w) => w.position + 1,
  title: (w) => (w.title === null ? 'Edited' : null),
  col_span: (w) => (w.col_span % 4) + 1,
  height: (w) => cycle(['compact', 'standard', 'tall'], w.height),
  drill_down: (w) => (w.drill_down === null ? 'https://example.test' : null),
  visualization_options: (w) => toggleKey(w.visualization_options),
  freshness_policy: (w) => (w.freshness_policy.mode === 'provider_default' ? { mode: 'max_age', max_age_seconds: 60 } : { mode: 'provider_default' }),
  snippet_id: (w) => otherString(w.snippet_id, 54),
  input_bindings: (w) => toggleKey(w.input_bindings),
  visualization: (w) => cycle([null, 'stat', 'table'], w.visualization),
  refresh_policy: (w) => (w.refresh_policy.mode === 'manual' ? { mode: 'on_load' } : { mode: 'manual' }),
  display_type: (w) => cycle([null, 'json', 'logs'], w.display_type),
  metric_key: (w) => otherString(w.metric_key, 100),
  metric_version: (w) => w.metric_version + 1,
  filter_bindings: (w) => toggleKey(w.filter_bindings),
};

export const COMMON_FIELDS: WidgetField[] = ['position', 'title', 'col_span', 'height', 'drill_down', 'visualization_options', 'freshness_policy'];
export const SNIPPET_FIELDS: WidgetField[] = ['snippet_id', 'input_bindings', 'visualization', 'refresh_policy', 'display_type'];
export const METRIC_FIELDS: WidgetField[] = ['metric_key', 'metric_version', 'filter_bindings'];

/** The other widget type, with the fields of that type: every type-specific field then differs. */
export function switchType(w: Widget): Widget {
  const common = Object.fromEntries(['widget_id', ...COMMON_FIELDS].map((k) => [k, (w as Any)[k]]));
  return (
    w.widget_type === 'snippet'
      ? { ...common, widget_type: 'platform_metric', metric_key: 'switched', metric_version: 1, filter_bindings: {} }
      : {
          ...common,
          widget_type: 'snippet',
          snippet_id: 'snp_switched',
          snippet_etag: 'e',
          input_bindings: {},
          visualization: null,
          refresh_policy: { mode: 'on_load' },
          display_type: null,
        }
  ) as Widget;
}
