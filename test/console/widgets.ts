/** A platform-metric widget as `POST /v1/dashboards` takes it, for the console's flows to lay out. */
export const metricWidget = (title: string, key = 'writes', col_span = 2, height = 'standard', extra: Record<string, unknown> = {}) => ({
  widget_type: 'platform_metric',
  position: 0,
  title,
  col_span,
  height,
  drill_down: null,
  visualization_options: {},
  freshness_policy: { mode: 'provider_default' },
  metric_key: key,
  metric_version: 1,
  filter_bindings: { time: { mode: 'inherit', filter_key: 'time' } },
  ...extra,
});
