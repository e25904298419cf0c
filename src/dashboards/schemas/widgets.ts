import { patterned } from '../../http/schemas.js';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DiscriminatedUnion, FreeFormObject, Nullable, NullableStringEnum, StringEnum } from './common.js';
import { Bindings, FreshnessPolicy, RefreshPolicy } from './policies.js';

export const VISUALIZATIONS = ['stat', 'sparkline', 'line', 'area', 'bar', 'donut', 'table', 'status_list', 'logs', 'json'] as const;
export const DISPLAY_TYPES = ['table', 'stat', 'json', 'logs', 'timeseries'] as const;

export const WidgetId = Type.String({ minLength: 1, maxLength: 54 });
export const SnippetRef = Type.String({ minLength: 1, maxLength: 54, description: 'A snippet of the workspace, `snp_<id>` or bare' });

/** The fields every widget has, but `widget_id`, which input may leave out. */
const common = {
  position: Type.Integer({ minimum: 0 }),
  title: Nullable(Type.String({ maxLength: 100 })),
  col_span: Type.Unsafe<1 | 2 | 3 | 4>({ type: 'number', enum: [1, 2, 3, 4], description: '1, 2, 3 or 4' }),
  height: StringEnum(['compact', 'standard', 'tall']),
  drill_down: Nullable(Type.String({ minLength: 1, maxLength: 2048 })),
  visualization_options: FreeFormObject('Free-form'),
  freshness_policy: FreshnessPolicy,
};

const snippetFields = {
  widget_type: Type.Literal('snippet'),
  snippet_id: SnippetRef,
  snippet_etag: Type.String({ description: "The snippet's etag this widget was built against; a new pin must be the current one (409, 7101)" }),
  input_bindings: Bindings("The snippet's inputs, by name"),
  visualization: NullableStringEnum(VISUALIZATIONS),
  refresh_policy: RefreshPolicy,
  display_type: NullableStringEnum(DISPLAY_TYPES, { description: 'How the snippet result is rendered in the widget' }),
};

const metricFields = {
  widget_type: Type.Literal('platform_metric'),
  metric_key: Type.String({ minLength: 1, maxLength: 100, ...patterned('^[a-z][a-z0-9_]*$', 'a metric key such as http_requests: a lower-case letter, then a-z, 0-9 and _', 'http_requests') }),
  metric_version: Type.Integer({ minimum: 1 }),
  filter_bindings: Bindings("The metric's filters, by name"),
};

function widgetUnion<I extends TSchema>(title: string, widgetId: I, description: string) {
  return DiscriminatedUnion(
    'widget_type',
    [
      Type.Object({ widget_id: widgetId, ...common, ...snippetFields }, { additionalProperties: false, description: 'A widget showing a snippet' }),
      Type.Object({ widget_id: widgetId, ...common, ...metricFields }, { additionalProperties: false, description: 'A widget showing a platform metric' }),
    ],
    { title, description },
  );
}

/** A widget as stored and shown: `widget_id` always present. */
export const Widget = widgetUnion('Widget', WidgetId, 'A widget, discriminated by `widget_type`');
export type Widget = Static<typeof Widget>;
export type SnippetWidget = Extract<Widget, { widget_type: 'snippet' }>;

/** A widget as written: without `widget_id` it gets a new `wdg_...`. */
export const WidgetInput = widgetUnion('WidgetInput', Type.Optional(WidgetId), 'A widget, discriminated by `widget_type`; one without `widget_id` gets a new `wdg_<id>`');
export type WidgetInput = Static<typeof WidgetInput>;

export const MAX_WIDGETS = 100;

export const Widgets = <T extends TSchema>(item: T) => Type.Array(item, { maxItems: MAX_WIDGETS, description: `At most ${MAX_WIDGETS}; widget_id unique (422, 7104)` });
