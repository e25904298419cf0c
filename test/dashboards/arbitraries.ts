import fc from 'fast-check';
import type { DashboardContent } from '../../src/dashboards/schemas/content.js';
import type { FilterDefinition } from '../../src/dashboards/schemas/filters.js';
import type { Widget } from '../../src/dashboards/schemas/widgets.js';
import type { Binding } from '../../src/dashboards/schemas/policies.js';
import { hasNoPoisonKey, isPoisonKey } from '../helpers/property.js';

/** fast-check generators of valid dashboard content, within the spec's every bound. */

const RESOURCES = ['cluster', 'install', 'product', 'package', 'region'] as const;
const label = fc.string({ minLength: 1, maxLength: 100 });
const ident = fc.stringMatching(/^[a-z][a-z0-9_]{0,31}$/);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
/** Drops the keys whose value is undefined: optional fields are absent, never null. */
const compact = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const variableInput = fc.oneof(
  fc.record({ kind: fc.constant('time_range' as const), default: optional(fc.record({ from: fc.integer(), to: fc.integer() })) }),
  fc.record({
    kind: fc.constant('resource' as const),
    resource: fc.constantFrom(...RESOURCES),
    default: optional(fc.oneof(fc.string({ maxLength: 255 }), fc.array(fc.string({ maxLength: 255 }), { minLength: 1, maxLength: 5 }))),
    multiple: optional(fc.boolean()),
  }),
  fc.record({ kind: fc.constant('enum' as const), options: fc.array(label, { minLength: 1, maxLength: 5 }), default: optional(label) }),
  fc.record({ kind: fc.constant('boolean' as const), default: optional(fc.boolean()) }),
  fc.record({ kind: fc.constant('number' as const), min: optional(fc.double({ noNaN: true, noDefaultInfinity: true })), max: optional(fc.integer()), default: optional(fc.integer()) }),
  fc.record({ kind: fc.constant('text' as const), default: optional(fc.string({ maxLength: 500 })), max_length: optional(fc.integer({ min: 1, max: 500 })) }),
);

export const filterDefinition: fc.Arbitrary<FilterDefinition> = fc.oneof(
  label.map((l) => ({ kind: 'time' as const, key: 'time' as const, label: l })),
  label.map((l) => ({ kind: 'comparison' as const, key: 'comparison' as const, label: l })),
  fc.record({ kind: fc.constant('resource' as const), key: fc.constantFrom(...RESOURCES), resource: fc.constantFrom(...RESOURCES), label }),
  fc.record({ kind: fc.constant('status' as const), key: fc.constant('status' as const), label, options: fc.array(label, { minLength: 1, maxLength: 5 }) }),
  fc
    .record({ name: ident, input: variableInput, label, description: optional(fc.string({ maxLength: 500 })), required: optional(fc.boolean()) })
    .map(({ name, input, label: l, description, required }) => ({
      kind: 'variable' as const,
      key: `var.${name}`,
      input: compact({ ...compact(input), key: name, label: l, description, required }),
    })) as fc.Arbitrary<FilterDefinition>,
);

export const filterDefinitions = fc.uniqueArray(filterDefinition, { maxLength: 6, selector: (f) => f.key });

// Valid content: a `__proto__` (or `constructor`) key is refused as a whole body (422), tested on its own.
const jsonValue = fc
  .jsonValue({ maxDepth: 2 })
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown)
  .filter(hasNoPoisonKey);
const mapKey = (maxLength: number, minLength = 0) => fc.string({ minLength, maxLength }).filter((k) => !isPoisonKey(k));

export const binding: fc.Arbitrary<Binding> = fc.oneof(
  fc
    .oneof(
      fc.constantFrom('time', 'comparison', 'cluster', 'install', 'product', 'package', 'region', 'status'),
      ident.map((n) => `var.${n}`),
    )
    .map((k) => ({ mode: 'inherit' as const, filter_key: k })),
  jsonValue.map((value) => ({ mode: 'fixed' as const, value })),
  fc.constant({ mode: 'unbound' as const }),
);

const bindings = fc.dictionary(mapKey(10, 1), binding, { maxKeys: 3 });
const freeForm = fc.dictionary(mapKey(8), jsonValue, { maxKeys: 3 });

const common = {
  position: fc.nat({ max: 50 }),
  title: fc.option(fc.string({ maxLength: 100 }), { nil: null }),
  col_span: fc.constantFrom(1 as const, 2 as const, 3 as const, 4 as const),
  height: fc.constantFrom('compact' as const, 'standard' as const, 'tall' as const),
  drill_down: fc.option(fc.string({ minLength: 1, maxLength: 60 }), { nil: null }),
  visualization_options: freeForm,
  freshness_policy: fc.oneof(
    fc.constant({ mode: 'provider_default' as const }),
    fc.integer({ min: 30, max: 86400 }).map((s) => ({ mode: 'max_age' as const, max_age_seconds: s })),
  ),
};

export interface SnippetPin {
  id: string;
  etag: string;
}

export const snippetWidgetFields = (pins: fc.Arbitrary<SnippetPin>) =>
  fc.record({
    widget_type: fc.constant('snippet' as const),
    pin: pins,
    input_bindings: bindings,
    visualization: fc.constantFrom(null, 'stat', 'sparkline', 'line', 'area', 'bar', 'donut', 'table', 'status_list', 'logs', 'json' as const),
    refresh_policy: fc.oneof(
      fc.constant({ mode: 'on_load' as const }),
      fc.constant({ mode: 'manual' as const }),
      fc.integer({ min: 60, max: 86400 }).map((s) => ({ mode: 'interval' as const, interval_seconds: s })),
    ),
    display_type: fc.constantFrom(null, 'table', 'stat', 'json', 'logs', 'timeseries' as const),
  });

const metricWidgetFields = fc.record({
  widget_type: fc.constant('platform_metric' as const),
  metric_key: fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/),
  metric_version: fc.integer({ min: 1, max: 5 }),
  filter_bindings: bindings,
});

/** A widget with the given id; snippet widgets pin one of `pins`. */
export function widget(widgetId: string, pins: fc.Arbitrary<SnippetPin>): fc.Arbitrary<Widget> {
  return fc.record({ ...common, specific: fc.oneof(snippetWidgetFields(pins), metricWidgetFields) }).map(({ specific, ...rest }) => {
    if (specific.widget_type === 'snippet') {
      const { pin, ...fields } = specific;
      return { widget_id: widgetId, ...rest, ...fields, snippet_id: pin.id, snippet_etag: pin.etag };
    }
    return { widget_id: widgetId, ...rest, ...specific };
  });
}

export const anyPin: fc.Arbitrary<SnippetPin> = fc.record({ id: fc.string({ minLength: 1, maxLength: 54 }), etag: fc.string({ maxLength: 20 }) });

/** Widgets whose ids come from `ids` (each at most once), in any order. */
export function widgets(ids: readonly string[], pins: fc.Arbitrary<SnippetPin>): fc.Arbitrary<Widget[]> {
  return fc
    .subarray([...ids])
    .chain((chosen) => fc.tuple(...chosen.map((id) => widget(id, pins))).map((ws) => ws))
    .chain((ws) => fc.shuffledSubarray(ws, { minLength: ws.length }));
}

export function dashboardContent(opts: { widgetIds?: readonly string[]; pins?: fc.Arbitrary<SnippetPin> } = {}): fc.Arbitrary<DashboardContent> {
  const ids = opts.widgetIds ?? ['w0', 'w1', 'w2', 'w3', 'w4'];
  return fc.record({
    name: fc.oneof(fc.constantFrom('Ops', 'Costs'), fc.string({ minLength: 1, maxLength: 100 })),
    description: fc.option(fc.oneof(fc.constant('About'), fc.string({ maxLength: 200 })), { nil: null }),
    purpose: fc.constantFrom('workspace_overview' as const, 'custom' as const),
    filter_definitions: filterDefinitions,
    default_filter_values: freeForm,
    widgets: widgets(ids, opts.pins ?? anyPin),
  });
}
