import type { ErrorEnvelope, Schemas, Widget } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { Badge } from '../../components.js';
import { useLoad } from '../../hooks.js';
import { Chart } from './chart.js';

type MetricWidget = Schemas['WidgetPlatformMetric'];
type SnippetWidget = Schemas['WidgetSnippet'];

/** The time range a dashboard shows, in Unix seconds. */
export interface Range {
  from: number;
  to: number;
}

/** The values a widget's inherit bindings read: the dashboard's filter values. */
export type FilterValues = Record<string, unknown>;

/** A metric's query from the widget's bindings: fixed values as they are, inherited ones from the dashboard. */
export function metricQuery(w: MetricWidget, values: FilterValues): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, binding] of Object.entries(w.filter_bindings)) {
    if (name === 'time') continue;
    const value = binding.mode === 'fixed' ? binding.value : binding.mode === 'inherit' ? values[binding.filter_key] : undefined;
    if (typeof value === 'string' && value !== '') query[name] = value;
  }
  return query;
}

function MetricBody({ widget, range, values }: { widget: MetricWidget; range: Range; values: FilterValues }) {
  const query = metricQuery(widget, values);
  const load = useLoad(
    () =>
      api.GET('/v1/platform_metrics/{key}/series', {
        params: { path: { key: widget.metric_key }, query: { version: widget.metric_version, from: range.from, to: range.to, ...query } },
      }),
    [widget.metric_key, widget.metric_version, range.from, range.to, JSON.stringify(query)],
  );
  if (load.error) {
    return (
      <p class="widget-problem" role="note">
        Cannot draw <code>{widget.metric_key}</code> version {widget.metric_version}: {messageOf(load.error)}
      </p>
    );
  }
  if (!load.data)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  const series = load.data;
  return <Chart points={series.points} unit={series.unit} height={widget.height} label={widget.title ?? widget.metric_key} />;
}

type DriftState = 'in step' | 'drifted' | 'archived' | 'missing';

const DRIFT_TEXT: Record<Exclude<DriftState, 'in step'>, string> = {
  drifted: 'Its snippet changed since this widget pinned it.',
  archived: 'Its snippet is archived.',
  missing: 'Its snippet no longer exists.',
};

/**
 * The snippet as it is now, and its drift from the pin: the same rule as a revision's
 * `snippet_etag_drift` (another etag, archived, or gone), read from the snippet itself.
 */
function SnippetBody({ widget }: { widget: SnippetWidget }) {
  const load = useLoad(() => api.GET('/v1/snippets/{id}', { params: { path: { id: widget.snippet_id } } }), [widget.snippet_id]);
  const snippet = load.data;
  const gone = (load.error as Partial<ErrorEnvelope> | null)?.errors?.[0]?.code === 7002;
  const drift: DriftState | null = gone ? 'missing' : !snippet ? null : snippet.state === 'archived' ? 'archived' : snippet.etag !== widget.snippet_etag ? 'drifted' : 'in step';
  return (
    <div class="snippet">
      <p class="widget-meta">
        <span>Display: {widget.display_type ?? 'default'}</span>
        {drift && <Badge value={drift} tone={drift === 'in step' ? 'good' : drift === 'missing' ? 'bad' : 'warn'} />}
      </p>
      {drift && drift !== 'in step' && <p class="muted">{DRIFT_TEXT[drift]}</p>}
      {load.error && !gone ? <p class="widget-problem">{messageOf(load.error)}</p> : snippet ? <pre class="source">{snippet.source}</pre> : !gone && <p class="muted">Loading…</p>}
    </div>
  );
}

/** One widget in its place in the grid: `col_span` columns of four, its height, its title. */
export function WidgetCard({ widget, range, values }: { widget: Widget; range: Range; values: FilterValues }) {
  const title = widget.title ?? (widget.widget_type === 'platform_metric' ? widget.metric_key : 'Snippet');
  return (
    <section class={`widget span-${widget.col_span} height-${widget.height}`} aria-label={title}>
      <h2>{title}</h2>
      {widget.widget_type === 'platform_metric' ? <MetricBody widget={widget} range={range} values={values} /> : <SnippetBody widget={widget} />}
    </section>
  );
}
