import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { Dashboard, Schemas } from '@workspace-platform/sdk';
import { api } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { Allowed, Field, FormError, inputProps, Loaded, PageHead, Table } from '../../components.js';
import { fieldErrors, oneOf } from '../../format.js';
import { focusAndShow, useAction, useLoad } from '../../hooks.js';
import { ResourceSelect, single } from './pickers.js';

type FilterDefinition = Schemas['FilterDefinition'];
/** A widget being edited: a new one has no id until saved. */
type DraftWidget = Schemas['WidgetInput'];

const SPANS: readonly DraftWidget['col_span'][] = [1, 2, 3, 4];
const HEIGHTS: readonly DraftWidget['height'][] = ['compact', 'standard', 'tall'];
const RESOURCES: readonly Schemas['ResourceFilter']['resource'][] = ['cluster', 'install', 'product', 'package', 'region'];
const NEW_FILTERS = ['time', 'comparison', ...RESOURCES] as const;

/** A filter's name for people: a variable's label is in its input, so its key stands in. */
const filterName = (f: FilterDefinition) => (f.kind === 'variable' ? f.key : f.label);

/** A new metric widget follows the dashboard's time filter, and each of its resource filters the metric can be narrowed by. */
function newMetricWidget(metric: Schemas['PlatformMetric'], position: number, filters: FilterDefinition[]): Schemas['WidgetInputPlatformMetric'] {
  const followed = metric.filter_keys.filter((k) => filters.some((f) => f.kind === 'resource' && f.key === k));
  return {
    widget_type: 'platform_metric',
    position,
    title: metric.title,
    col_span: 2,
    height: 'standard',
    drill_down: null,
    visualization_options: {},
    freshness_policy: { mode: 'provider_default' },
    metric_key: metric.key,
    metric_version: metric.version,
    filter_bindings: { time: { mode: 'inherit', filter_key: 'time' }, ...Object.fromEntries(followed.map((k) => [k, { mode: 'inherit' as const, filter_key: k }])) },
  };
}

/** Editing a dashboard's name, description, filters and widgets; saved as one PATCH with If-Match. */
export function EditDashboardView() {
  const { params } = useRoute();
  const id = params['id'];
  const load = useLoad(() => api.GET('/v1/dashboards/{id}', { params: { path: { id } } }), [id]);
  return (
    <Loaded load={load} what="the dashboard">
      {(d) => (
        <Allowed
          to="write"
          otherwise={
            <p class="empty">
              Your role in this workspace reads dashboards but does not change them. <a href={`/console/dashboards/${d.id}`}>Back to {d.name}</a>
            </p>
          }
        >
          <EditForm dashboard={d} />
        </Allowed>
      )}
    </Loaded>
  );
}

/** The parts of a dashboard the editor changes, as the form holds them. */
interface Draft {
  name: string;
  description: string;
  filters: FilterDefinition[];
  /** The filters' values when the dashboard opens (`default_filter_values`). */
  values: Record<string, unknown>;
  widgets: DraftWidget[];
}

const draftOf = (d: Dashboard): Draft => ({
  name: d.name,
  description: d.description ?? '',
  filters: d.filter_definitions,
  values: d.default_filter_values,
  widgets: [...d.widgets].sort((a, b) => a.position - b.position),
});

/** Each part of a draft: its name for people, how it reads in a table, and its value to compare. */
const PARTS: readonly { key: keyof Draft; label: string; show: (d: Draft) => string }[] = [
  { key: 'name', label: 'Name', show: (d) => d.name },
  { key: 'description', label: 'Description', show: (d) => d.description || '(none)' },
  { key: 'filters', label: 'Filters', show: (d) => d.filters.map(filterName).join(', ') || '(none)' },
  {
    key: 'values',
    label: 'Filter defaults',
    show: (d) =>
      Object.entries(d.values)
        .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(', ') || '(none)',
  },
  { key: 'widgets', label: 'Widgets', show: (d) => d.widgets.map((w) => `${w.title} (${w.col_span} col, ${w.height})`).join(', ') || '(none)' },
];

/** A widget as the editor saves it: the fields of WidgetInput only, so that a stored widget and a draft compare equal. */
const comparable = (d: Draft, key: keyof Draft) =>
  JSON.stringify(key === 'widgets' ? d.widgets.map((w) => Object.fromEntries(Object.entries(w).filter(([k]) => !['id', 'position', 'created_at', 'updated_at'].includes(k)))) : d[key]);
const same = (a: Draft, b: Draft, key: keyof Draft) => comparable(a, key) === comparable(b, key);

/**
 * Someone saved the dashboard after it was opened: what each side changed from the version
 * both started from, and the two ways on. "Reapply" keeps every part this person changed and
 * takes theirs for the rest (a part both changed keeps this person's, and is marked); "discard"
 * loads theirs as it is. Either way the form then holds their etag, so the next save is knowing.
 */
function ConflictPanel({ base, theirs, mine, onReapply, onDiscard }: { base: Draft; theirs: Draft; mine: Draft; onReapply: () => void; onDiscard: () => void }) {
  const parts = PARTS.filter((p) => !same(base, theirs, p.key) || !same(base, mine, p.key));
  return (
    <div class="card conflict" role="alert" aria-labelledby="conflict-title">
      <h2 id="conflict-title">Someone else saved this dashboard after you opened it</h2>
      <p>Nothing of yours was saved, and your edits are still in the form. What each of you changed:</p>
      <Table
        rows={parts}
        rowKey={(p) => p.key}
        label="What changed since you opened the dashboard"
        columns={[
          {
            header: 'Part',
            cell: (p) => (
              <>
                {p.label}
                {!same(base, theirs, p.key) && !same(base, mine, p.key) && <strong> (both changed)</strong>}
              </>
            ),
          },
          { header: 'When you opened it', cell: (p) => p.show(base) },
          { header: 'Theirs, saved', cell: (p) => (same(base, theirs, p.key) ? <span class="muted">unchanged</span> : p.show(theirs)) },
          { header: 'Yours, not saved', cell: (p) => (same(base, mine, p.key) ? <span class="muted">unchanged</span> : p.show(mine)) },
        ]}
      />
      <div class="actions">
        <button type="button" onClick={onReapply}>
          Reload and reapply my changes
        </button>
        <button type="button" class="secondary" onClick={onDiscard}>
          Discard mine, load theirs
        </button>
      </div>
    </div>
  );
}

function EditForm({ dashboard }: { dashboard: Dashboard }) {
  const { route } = useLocation();
  // The version the form's edits apply to: the one opened, or theirs after a conflict is settled.
  const [base, setBase] = useState<{ draft: Draft; etag: string }>(() => ({ draft: draftOf(dashboard), etag: dashboard.etag }));
  const [theirs, setTheirs] = useState<{ draft: Draft; etag: string } | null>(null);
  const [settled, setSettled] = useState<string | null>(null);
  const [name, setName] = useState(base.draft.name);
  const [description, setDescription] = useState(base.draft.description);
  const [summary, setSummary] = useState('');
  const [filters, setFilters] = useState<FilterDefinition[]>(base.draft.filters);
  const [values, setValues] = useState<Record<string, unknown>>(base.draft.values);
  const [widgets, setWidgets] = useState<DraftWidget[]>(base.draft.widgets);
  const mine: Draft = { name, description, filters, values, widgets };
  const fill = (d: Draft) => {
    setName(d.name);
    setDescription(d.description);
    setFilters(d.filters);
    setValues(d.values);
    setWidgets(d.widgets);
  };
  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const alert = panel.current?.querySelector<HTMLElement>('[role="alert"]');
    if (theirs && alert) focusAndShow(alert);
  }, [theirs]);
  const [newFilter, setNewFilter] = useState<(typeof NEW_FILTERS)[number]>('time');
  const metrics = useLoad(() => api.GET('/v1/platform_metrics', {}), []);
  const catalog = metrics.data?.data ?? [];
  const [newMetric, setNewMetric] = useState('');
  useEffect(() => void (catalog[0] && !newMetric && setNewMetric(catalog[0].key)), [catalog.length]);
  const save = useAction();
  const errors = fieldErrors(save.error);

  const update = (i: number, patch: Partial<Pick<DraftWidget, 'title' | 'col_span' | 'height'>>) => setWidgets((all) => all.map((w, j) => (j === i ? { ...w, ...patch } : w)));
  const move = (i: number, by: -1 | 1) =>
    setWidgets((all) => {
      const next = [...all];
      const [w] = next.splice(i, 1);
      next.splice(i + by, 0, w);
      return next;
    });
  const addFilter = () => {
    const label = newFilter.replace(/^./, (c) => c.toUpperCase());
    const def: FilterDefinition =
      newFilter === 'time'
        ? { kind: 'time', key: 'time', label }
        : newFilter === 'comparison'
          ? { kind: 'comparison', key: 'comparison', label }
          : { kind: 'resource', key: newFilter, resource: newFilter, label };
    setFilters((all) => [...all, def]);
  };
  /** A resource filter's default value ('' removes it), or a resource variable's own default. */
  const setDefault = (i: number, value: string) => {
    const f = filters[i];
    if (f?.kind === 'resource') {
      setValues((all) => {
        const { [f.key]: _old, ...rest } = all;
        return value === '' ? rest : { ...rest, [f.key]: value };
      });
    } else if (f?.kind === 'variable' && f.input.kind === 'resource') {
      const { default: _old, ...input } = f.input;
      const next: FilterDefinition = { ...f, input: value === '' ? input : { ...input, default: value } };
      setFilters((all) => all.map((x, j) => (j === i ? next : x)));
    }
  };
  const removeFilter = (i: number) => {
    const f = filters[i];
    setFilters((all) => all.filter((_, j) => j !== i));
    // A resource filter's default goes with it; the dashboard's other values (time, comparison) stay.
    if (f?.kind === 'resource' && !filters.some((x, j) => j !== i && x.key === f.key)) setDefault(i, '');
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const body = {
      name,
      description: description === '' ? null : description,
      filter_definitions: filters,
      // Sent only when changed: a value left alone is not checked again (a cluster deleted since stays named until changed).
      ...(same(base.draft, mine, 'values') ? {} : { default_filter_values: values }),
      widgets: widgets.map((w, position) => ({ ...w, position })),
      ...(summary ? { summary } : {}),
    };
    setSettled(null);
    const res = await save.run(() => api.PATCH('/v1/dashboards/{id}', { params: { path: { id: dashboard.id }, header: ifMatch(base.etag) }, body }));
    if (res.ok) return route(`/console/dashboards/${dashboard.id}`);
    if (!explainConflict(res.error, 'dashboard', 'save')) return;
    const latest = await api.GET('/v1/dashboards/{id}', { params: { path: { id: dashboard.id } } });
    if (latest.data) setTheirs({ draft: draftOf(latest.data), etag: latest.data.etag });
  };
  const reapply = () => {
    if (!theirs) return;
    const pick = <K extends keyof Draft>(key: K): Draft[K] => (same(base.draft, mine, key) ? theirs.draft[key] : mine[key]);
    fill({ name: pick('name'), description: pick('description'), filters: pick('filters'), values: pick('values'), widgets: pick('widgets') });
    settle(theirs, 'Their version is loaded with your changes on it. Look it over, then save.');
  };
  const discard = () => {
    if (!theirs) return;
    fill(theirs.draft);
    settle(theirs, 'Their version is loaded; your changes are gone.');
  };
  const settle = (next: { draft: Draft; etag: string }, said: string) => {
    setBase(next);
    setTheirs(null);
    save.clear();
    setSettled(said);
  };

  return (
    <form onSubmit={submit} aria-labelledby="edit-title" noValidate>
      <p class="crumbs">
        <a href={`/console/dashboards/${dashboard.id}`}>{dashboard.name}</a> /
      </p>
      <PageHead title="Edit dashboard" id="edit-title" />
      <div class="card form">
        <Field label="Name" name="name" error={errors['name']}>
          <input {...inputProps('name', errors['name'])} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Description" name="description" error={errors['description']}>
          <textarea {...inputProps('description', errors['description'])} rows={2} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
        </Field>
      </div>

      <h2>Filters</h2>
      {errors['filter_definitions'] && <p class="field-error">{errors['filter_definitions']}</p>}
      <ul class="rows">
        {filters.map((f, i) => (
          <li key={`${f.key}${i}`}>
            <span>
              <strong>{filterName(f)}</strong>{' '}
              <span class="muted">
                ({f.kind}: {f.key})
              </span>
            </span>
            {f.kind === 'resource' && (
              <Field label={`Default ${f.resource}`} name={`filter-default-${i}`} error={errors[`default_filter_values.${f.key}`]}>
                <ResourceSelect
                  kind={f.resource}
                  value={single(values[f.key])}
                  onChange={(v) => setDefault(i, v)}
                  emptyLabel="none (all)"
                  selectProps={inputProps(`filter-default-${i}`, errors[`default_filter_values.${f.key}`])}
                />
              </Field>
            )}
            {f.kind === 'variable' && f.input.kind === 'resource' && (
              <Field label={`Default ${f.input.resource}`} name={`filter-default-${i}`} error={errors[`filter_definitions.${i}.input.default`]}>
                <ResourceSelect
                  kind={f.input.resource}
                  value={single(f.input.default)}
                  onChange={(v) => setDefault(i, v)}
                  emptyLabel="none (all)"
                  selectProps={inputProps(`filter-default-${i}`, errors[`filter_definitions.${i}.input.default`])}
                />
              </Field>
            )}
            {Object.entries(errors)
              .filter(([k]) => k.startsWith(`filter_definitions.${i}`) && k !== `filter_definitions.${i}.input.default`)
              .map(([k, m]) => (
                <span class="field-error" key={k}>
                  {m}
                </span>
              ))}
            <button type="button" class="secondary" aria-label={`Remove filter ${filterName(f)}`} onClick={() => removeFilter(i)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <div class="inline-form">
        <label class="inline">
          Add a filter
          <select value={newFilter} onChange={(e) => setNewFilter(oneOf(NEW_FILTERS, (e.target as HTMLSelectElement).value) ?? 'time')}>
            {NEW_FILTERS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" onClick={addFilter}>
          Add filter
        </button>
      </div>

      <h2>Widgets</h2>
      {errors['widgets'] && <p class="field-error">{errors['widgets']}</p>}
      {widgets.length === 0 && <p class="empty">No widgets: add a platform metric below.</p>}
      <ol class="rows widgets-edit">
        {widgets.map((w, i) => {
          const err = (f: string) => errors[`widgets.${i}.${f}`];
          const label = w.title ?? (w.widget_type === 'platform_metric' ? w.metric_key : w.snippet_id);
          return (
            <li key={w.widget_id ?? `new${i}`}>
              <Field label={`Title of widget ${i + 1}`} name={`widgets.${i}.title`} error={err('title')}>
                <input {...inputProps(`widgets.${i}.title`, err('title'))} value={w.title ?? ''} onInput={(e) => update(i, { title: (e.target as HTMLInputElement).value || null })} />
              </Field>
              <Field label="Columns" name={`widgets.${i}.col_span`} error={err('col_span')}>
                <select
                  {...inputProps(`widgets.${i}.col_span`, err('col_span'))}
                  value={String(w.col_span)}
                  onChange={(e) => update(i, { col_span: SPANS.find((s) => String(s) === (e.target as HTMLSelectElement).value) ?? w.col_span })}
                >
                  {SPANS.map((s) => (
                    <option key={s} value={s}>
                      {s}
                    </option>
                  ))}
                </select>
              </Field>
              <Field label="Height" name={`widgets.${i}.height`} error={err('height')}>
                <select
                  {...inputProps(`widgets.${i}.height`, err('height'))}
                  value={w.height}
                  onChange={(e) => update(i, { height: oneOf(HEIGHTS, (e.target as HTMLSelectElement).value) ?? w.height })}
                >
                  {HEIGHTS.map((h) => (
                    <option key={h} value={h}>
                      {h}
                    </option>
                  ))}
                </select>
              </Field>
              <p class="muted what">
                {w.widget_type === 'platform_metric' ? `Metric ${w.metric_key} v${w.metric_version}` : `Snippet ${w.snippet_id}`}
                {err('metric_key') && <span class="field-error"> {err('metric_key')}</span>}
                {err('snippet_id') && <span class="field-error"> {err('snippet_id')}</span>}
              </p>
              <div class="actions">
                <button type="button" class="secondary" aria-label={`Move ${label} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                  ↑
                </button>
                <button type="button" class="secondary" aria-label={`Move ${label} down`} disabled={i === widgets.length - 1} onClick={() => move(i, 1)}>
                  ↓
                </button>
                <button type="button" class="secondary" aria-label={`Remove ${label}`} onClick={() => setWidgets((all) => all.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </div>
            </li>
          );
        })}
      </ol>
      <div class="inline-form">
        <label class="inline">
          Metric
          <select value={newMetric} onChange={(e) => setNewMetric((e.target as HTMLSelectElement).value)}>
            {catalog.map((m) => (
              <option key={m.key} value={m.key}>
                {m.title}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          class="secondary"
          disabled={!catalog.length}
          onClick={() => {
            const m = catalog.find((x) => x.key === newMetric);
            if (m) setWidgets((all) => [...all, newMetricWidget(m, all.length, filters)]);
          }}
        >
          Add metric widget
        </button>
      </div>

      <div class="card form">
        <Field label="Summary of the change (optional)" name="summary" error={errors['summary']}>
          <input {...inputProps('summary', errors['summary'])} value={summary} onInput={(e) => setSummary((e.target as HTMLInputElement).value)} />
        </Field>
      </div>
      <div ref={panel}>{theirs && <ConflictPanel base={base.draft} theirs={theirs.draft} mine={mine} onReapply={reapply} onDiscard={discard} />}</div>
      {settled && (
        <p role="status" class="notice">
          {settled}
        </p>
      )}
      <FormError error={explainConflict(save.error, 'dashboard', 'save') ? null : save.error} fields={['name', 'description', 'summary', 'widgets', 'filter_definitions', 'default_filter_values']} />
      <div class="actions">
        <a class="button secondary" href={`/console/dashboards/${dashboard.id}`}>
          Cancel
        </a>
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}
