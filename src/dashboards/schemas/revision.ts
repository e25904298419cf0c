import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, UnixSeconds } from '../../http/schemas.js';
import { closed, Nullable, StringEnum } from './common.js';
import { contentFields, Summary } from './content.js';
import { Widget, WidgetId } from './widgets.js';

export const DASHBOARD_FIELDS = ['name', 'description', 'purpose', 'filter_definitions', 'default_filter_values'] as const;
export type DashboardField = (typeof DASHBOARD_FIELDS)[number];

/** The widget fields a diff compares, in the spec's order (`snippet_etag` is not one). */
export const WIDGET_FIELDS = [
  'position',
  'title',
  'col_span',
  'height',
  'drill_down',
  'visualization_options',
  'freshness_policy',
  'widget_type',
  'snippet_id',
  'input_bindings',
  'visualization',
  'refresh_policy',
  'display_type',
  'metric_key',
  'metric_version',
  'filter_bindings',
] as const;
export type WidgetField = (typeof WIDGET_FIELDS)[number];

export const REVISION_SOURCES = ['manual', 'automatic', 'restore', 'reset', 'backfill'] as const;

const Count = Type.Integer({ minimum: 0 });
const WidgetIdSet = Type.Object({ count: Count, widget_ids: Type.Array(WidgetId) }, closed);

export const StructuralDiff = Type.Object(
  {
    version: Type.Literal(1),
    dashboard_fields: Type.Array(StringEnum(DASHBOARD_FIELDS)),
    widgets: Type.Object(
      {
        added: WidgetIdSet,
        removed: WidgetIdSet,
        changed: Type.Object(
          {
            count: Count,
            widgets: Type.Array(Type.Object({ widget_id: WidgetId, fields: Type.Array(StringEnum(WIDGET_FIELDS)) }, closed)),
          },
          closed,
        ),
      },
      closed,
    ),
  },
  { title: 'StructuralDiff', ...closed, description: 'What changed against the parent revision; widgets matched by widget_id, values compared structurally' },
);
export type StructuralDiff = Static<typeof StructuralDiff>;

export const SnippetEtagDrift = Type.Object(
  {
    widget_id: WidgetId,
    snippet_id: Type.String({ minLength: 1, maxLength: 54 }),
    snapshot_etag: Type.String({ description: 'The etag the revision pins' }),
    current_etag: Nullable(Type.String(), { description: 'null when the snippet is missing' }),
    current_state: StringEnum(['active', 'archived', 'missing']),
    restore_action: StringEnum(['none', 'reactivate', 'blocked'], { description: 'What a restore of this revision does about the snippet' }),
  },
  { title: 'SnippetEtagDrift', ...closed, description: 'A snippet widget whose snippet now has another etag or is not active; computed when read' },
);
export type SnippetEtagDrift = Static<typeof SnippetEtagDrift>;

const RevisionId = Type.String({ minLength: 1, maxLength: 55 });

export const DashboardRevision = Type.Object(
  {
    id: RevisionId,
    dashboard_id: Type.String({ minLength: 1, maxLength: 55 }),
    workspace_id: Type.String({ minLength: 1, maxLength: 53 }),
    parent_revision_id: Nullable(RevisionId),
    restored_from_revision_id: Nullable(RevisionId),
    source: StringEnum(REVISION_SOURCES),
    author_id: Type.String({ description: 'The acting user, or the workspace API token that acted' }),
    summary: Summary,
    ...contentFields(Widget),
    structural_diff: Nullable(StructuralDiff, { description: 'null for a first revision' }),
    snippet_etag_drift: Type.Array(SnippetEtagDrift),
    created_at: UnixSeconds('Unix seconds'),
  },
  { title: 'DashboardRevision', ...closed, description: 'An immutable snapshot of a dashboard' },
);
export type DashboardRevision = Static<typeof DashboardRevision>;

export const RevisionList = ListEnvelope(DashboardRevision, 'Newest first');
