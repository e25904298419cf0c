/** A snippet widget of the spec's shape, for the benchmarks' dashboards. */
export const widget = (i: number, snippetId: string, etag: string) => ({
  widget_id: `w${i}`,
  widget_type: 'snippet',
  position: i,
  title: `Widget ${i}`,
  col_span: 2,
  height: 'standard',
  drill_down: null,
  visualization_options: { stacked: true },
  freshness_policy: { mode: 'max_age', max_age_seconds: 300 },
  snippet_id: snippetId,
  snippet_etag: etag,
  input_bindings: { since: { mode: 'inherit', filter_key: 'time' }, limit: { mode: 'fixed', value: 50 } },
  visualization: 'line',
  refresh_policy: { mode: 'interval', interval_seconds: 60 },
  display_type: 'timeseries',
});
