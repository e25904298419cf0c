import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { FreeFormObject, Nullable, StringEnum } from './common.js';
import { FilterDefinitions } from './filters.js';
import { Widget, Widgets } from './widgets.js';

export const PURPOSES = ['workspace_overview', 'custom'] as const;

/** A dashboard's content fields, shared by dashboards, their revisions and the write bodies. */
export const contentFields = <W extends TSchema>(widget: W) => ({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Nullable(Type.String({ maxLength: 1000 })),
  purpose: StringEnum(PURPOSES),
  filter_definitions: FilterDefinitions,
  default_filter_values: FreeFormObject('Free-form: the filters’ values when the dashboard opens'),
  widgets: Widgets(widget),
});

// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a schema kept only to derive DashboardContent from it
const Content = Type.Object(contentFields(Widget));
/** What a revision holds and a diff compares. */
export type DashboardContent = Static<typeof Content>;

export const Summary = Nullable(Type.String({ maxLength: 1000 }), { description: 'Why the revision was made; at most 1000 characters' });
