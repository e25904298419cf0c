import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, UnixSeconds } from '../../http/schemas.js';
import { contentFields, Summary } from './content.js';
import { Widget, WidgetInput } from './widgets.js';

export const Dashboard = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    ...contentFields(Widget),
    current_revision_id: Type.String({ description: 'The revision whose content this is' }),
    etag: Type.String(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'Dashboard', additionalProperties: false },
);
export type Dashboard = Static<typeof Dashboard>;

export const DashboardList = ListEnvelope(Dashboard, 'Newest first');

const input = contentFields(WidgetInput);

export const CreateDashboardBody = Type.Object(
  {
    name: input.name,
    description: Type.Optional(input.description),
    purpose: input.purpose,
    filter_definitions: input.filter_definitions,
    default_filter_values: input.default_filter_values,
    widgets: input.widgets,
  },
  { title: 'CreateDashboardBody', additionalProperties: false },
);
export type CreateDashboardBody = Static<typeof CreateDashboardBody>;

export const UpdateDashboardBody = Type.Object(
  {
    name: Type.Optional(input.name),
    description: Type.Optional(input.description),
    purpose: Type.Optional(input.purpose),
    filter_definitions: Type.Optional(input.filter_definitions),
    default_filter_values: Type.Optional(input.default_filter_values),
    widgets: Type.Optional(input.widgets),
    summary: Type.Optional(Summary),
  },
  { title: 'UpdateDashboardBody', additionalProperties: false, description: 'Each field given replaces that field as a whole; `summary` describes the revision' },
);
export type UpdateDashboardBody = Static<typeof UpdateDashboardBody>;

/** Restore and reset take no input but an optional summary; the body itself may be left out. */
export const RevisionActionBody = Type.Unsafe<{ summary?: string | null } | null>({
  // One schema for both, not a union: a bad summary gets one entry, not one per branch.
  type: ['object', 'null'],
  properties: { summary: Summary },
  additionalProperties: false,
  description: 'Optional: `{summary}` for the new revision',
});

export const DashboardParams = Type.Object({ id: PathId(55, 'Dashboard id, `dash_<id>` or bare; length 1-55') });

export const RevisionParams = Type.Object({
  id: PathId(55, 'Dashboard id, `dash_<id>` or bare; length 1-55'),
  revision_id: PathId(55, 'Revision id, `drev_<id>` or bare; length 1-55'),
});

export const ListDashboardsQuery = PageQuery(100, 20);

export const ListRevisionsQuery = PageQuery(10, 10);
