import { Type, type Static } from '@sinclair/typebox';
import { UnixSeconds } from '../http/schemas.js';

export const METRIC_KEYS = ['machines_running', 'machines_suspended', 'monthly_cost_cents', 'renders', 'secret_accesses', 'writes', 'notifications_unread'] as const;
export type MetricKey = (typeof METRIC_KEYS)[number];

/** The filters a series can be narrowed by, each named by the metrics that accept it (`filter_keys`). */
export const METRIC_FILTERS = ['cluster', 'region', 'install', 'status', 'type'] as const;
export type MetricFilter = (typeof METRIC_FILTERS)[number];

export const PlatformMetric = Type.Object(
  {
    key: Type.String({ description: 'What a `platform_metric` widget names as `metric_key`' }),
    version: Type.Integer({ minimum: 1, description: 'What a widget names as `metric_version`; a metric whose meaning changes gets a new version' }),
    title: Type.String({ description: 'A name for people' }),
    unit: Type.String({ description: 'What a value counts' }),
    description: Type.String({ description: 'How each point is computed' }),
    kind: Type.Union([Type.Literal('gauge'), Type.Literal('counter')], {
      description: "gauge: the value at the point's time; counter: how many happened in the step that ends at the point's time",
    }),
    filter_keys: Type.Array(Type.Union(METRIC_FILTERS.map((k) => Type.Literal(k))), { description: 'The query parameters that narrow its series' }),
  },
  { title: 'PlatformMetric', additionalProperties: false, description: 'A platform metric a dashboard widget can draw' },
);
export type PlatformMetric = Static<typeof PlatformMetric>;

export const PlatformMetricList = Type.Object(
  { data: Type.Array(PlatformMetric) },
  { title: 'PlatformMetricList', additionalProperties: false, description: 'Every platform metric, in a fixed order (not paged: the set is small and fixed)' },
);

export const MetricKeyPath = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 100, description: 'A metric key from GET /v1/platform_metrics' }) },
  { title: 'MetricKeyPath', additionalProperties: false },
);

/** Series are kept to this many points, so a year cannot be asked for by the minute. */
export const MAX_POINTS = 1000;
/** Without `step`, one that gives about this many points. */
export const DEFAULT_POINTS = 96;
export const DEFAULT_SPAN_SECONDS = 86_400;

export const SeriesQuery = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'The version the widget was made for; 404 when the metric is at another' })),
    from: Type.Optional(UnixSeconds(`Start of the range, Unix seconds (default: \`to\` less ${DEFAULT_SPAN_SECONDS / 3600} hours)`)),
    to: Type.Optional(UnixSeconds('End of the range, Unix seconds (default: now)')),
    step: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 31_536_000, description: `Seconds between points (default: the range divided into about ${DEFAULT_POINTS}); at most ${MAX_POINTS} points per series (422)` }),
    ),
    cluster: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Machines of this cluster only (machines_running, machines_suspended, monthly_cost_cents)' })),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Machines of this region (GET /v1/regions) only (machines_running, machines_suspended, monthly_cost_cents)' })),
    install: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Renders of this install only (renders)' })),
    status: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Renders in this state only (renders): queued, running, succeeded, failed...' })),
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Events of this type only (writes): an event type such as `secret.created`, or `<resource>.*`' })),
  },
  { additionalProperties: false },
);
export type SeriesQuery = Static<typeof SeriesQuery>;

export const Series = Type.Object(
  {
    key: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    unit: Type.String(),
    from: UnixSeconds("The range's start as used"),
    to: UnixSeconds("The last point's time"),
    step: Type.Integer({ minimum: 1, description: 'Seconds between points as used' }),
    points: Type.Array(Type.Tuple([UnixSeconds(), Type.Number()]), {
      description: '`[t, value]`, t ascending: from + step, from + 2·step, ... up to the first at or past `to`',
    }),
  },
  { title: 'Series', additionalProperties: false, description: "A metric's points over a range, computed from the workspace's own records and events" },
);
export type Series = Static<typeof Series>;
