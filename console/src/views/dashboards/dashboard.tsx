import { useLocation, useRoute } from 'preact-iso';
import type { Dashboard } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { Allowed, ConfirmButton, Loaded, PageHead, Time } from '../../components.js';
import { useAction, useLoad } from '../../hooks.js';
import { WidgetCard, type Range } from './widgets.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { pickableFilters, ResourceSelect, single } from './pickers.js';

export const RANGES = { '1h': 3600, '6h': 21_600, '24h': 86_400, '7d': 604_800, '30d': 2_592_000 } as const;
type RangeKey = keyof typeof RANGES;

/** The dashboard's own time filter (`default_filter_values.time`, seconds relative to now when not positive) as a range key. */
function defaultRange(d: Dashboard): RangeKey {
  const t = d.default_filter_values['time'] as { from?: number; to?: number } | undefined;
  const span = t && typeof t.from === 'number' && typeof t.to === 'number' ? t.to - t.from : 86_400;
  return (Object.entries(RANGES).find(([, s]) => s >= span)?.[0] as RangeKey | undefined) ?? '30d';
}

/**
 * A dashboard laid out as its widgets say, with its time filter and its resource filters in the
 * address (reload keeps them): `?range=` and, per resource filter or variable, `?<key>=<id>`
 * (empty: all, over the dashboard's default).
 */
export function DashboardView() {
  const { params } = useRoute();
  const location = useLocation();
  const id = params['id'];
  const load = useLoad(() => api.GET('/v1/dashboards/{id}', { params: { path: { id } } }), [id]);
  const reset = useAction();
  const remove = useAction();
  return (
    <Loaded load={load} what="the dashboard">
      {(d) => {
        const rangeKey = ((location.query['range'] as RangeKey | undefined) && location.query['range'] in RANGES ? location.query['range'] : defaultRange(d)) as RangeKey;
        // Whole minutes, so a re-render within the minute asks for the same series; up to the minute under way.
        const now = Math.ceil(Date.now() / 60_000) * 60;
        const range: Range = { from: now - RANGES[rangeKey], to: now };
        // The range runs to the end of the minute under way; its figures are as of when they were asked.
        const asOf = Math.min(range.to, Math.floor(Date.now() / 1000));
        const widgets = [...d.widgets].sort((a, b) => a.position - b.position);
        const pickable = pickableFilters(d);
        // The values the widgets read: the dashboard's defaults (a variable's own when it has none), then the address's.
        const values: Record<string, unknown> = { ...d.default_filter_values };
        for (const f of pickable) {
          if (!(f.key in values) && f.fallback !== undefined) values[f.key] = f.fallback;
          const chosen = location.query[f.key];
          if (typeof chosen === 'string') values[f.key] = chosen;
        }
        /** The address with `changes` over what it holds now. */
        const go = (changes: Record<string, string>) => location.route(`/console/dashboards/${d.id}?${new URLSearchParams({ ...location.query, ...changes }).toString()}`, true);
        return (
          <section aria-labelledby="dashboard-title">
            <PageHead title={d.name} id="dashboard-title">
              <label class="inline">
                Time range
                <select value={rangeKey} onChange={(e) => go({ range: (e.target as HTMLSelectElement).value })}>
                  {Object.keys(RANGES).map((k) => (
                    <option value={k} key={k}>
                      Last {k}
                    </option>
                  ))}
                </select>
              </label>
              <Allowed to="write">
                <a class="button secondary" href={`/console/dashboards/${d.id}/edit`}>
                  Edit
                </a>
              </Allowed>
              <a class="button secondary" href={`/console/dashboards/${d.id}/revisions`}>
                History
              </a>
              <Allowed to="write">
                <ConfirmButton
                  label="Reset"
                  title="Reset this dashboard?"
                  danger
                  body={
                    <p>
                      {d.purpose === 'workspace_overview' ? 'Its filters and widgets go back to the built-in overview layout.' : 'Its filters and widgets are emptied.'} The current content stays in
                      its history and can be restored.
                    </p>
                  }
                  onConfirm={async () => {
                    // Either way the page shows the dashboard as it now is: reset, or changed by someone else.
                    await reset.run(() => api.POST('/v1/dashboards/{id}:reset', { params: { path: { id: d.id }, header: ifMatch(d.etag) }, body: null }));
                    await load.reload();
                  }}
                />
                <ConfirmButton
                  label="Delete"
                  title={`Delete ${d.name}?`}
                  danger
                  typeToConfirm={d.name}
                  body={<p>The dashboard and its history are deleted for good.</p>}
                  onConfirm={async () => {
                    const res = await remove.run(() => api.DELETE('/v1/dashboards/{id}', { params: { path: { id: d.id }, header: ifMatch(d.etag) } }));
                    if (res.ok) location.route('/console/dashboards');
                    else await load.reload();
                  }}
                />
              </Allowed>
            </PageHead>
            {d.description && <p class="lead">{d.description}</p>}
            <p class="muted">
              Layout last changed <Time at={d.updated_at} /> · figures as of <Time at={asOf} />
            </p>
            {pickable.length > 0 && (
              <div class="inline-form filters" role="group" aria-label="Filters">
                {pickable.map((f) => (
                  <label class="inline" key={f.key}>
                    <span>{f.label}</span>
                    <ResourceSelect kind={f.kind} value={single(values[f.key])} onChange={(v) => go({ [f.key]: v })} />
                  </label>
                ))}
              </div>
            )}
            {reset.error ? (
              <p role="alert" class="error">
                {explainConflict(reset.error, 'dashboard', 'reset') ?? messageOf(reset.error)}
              </p>
            ) : null}
            {remove.error ? (
              <p role="alert" class="error">
                {explainConflict(remove.error, 'dashboard', 'delete') ?? messageOf(remove.error)}
              </p>
            ) : null}
            {widgets.length === 0 ? (
              <p class="empty">
                No widgets yet.
                <Allowed to="write">
                  {' '}
                  <a href={`/console/dashboards/${d.id}/edit`}>Add one</a>: a platform metric (machines, renders, writes…) or a snippet.
                </Allowed>
              </p>
            ) : (
              <div class="grid">
                {widgets.map((w) => (
                  <WidgetCard key={w.widget_id} widget={w} range={range} values={values} />
                ))}
              </div>
            )}
          </section>
        );
      }}
    </Loaded>
  );
}
