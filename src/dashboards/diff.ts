import { DASHBOARD_FIELDS, WIDGET_FIELDS, type StructuralDiff } from './schemas/revision.js';
import type { DashboardContent } from './schemas/content.js';
import type { Widget } from './schemas/widgets.js';
import { structurallyEqual } from './structural-equal.js';

const field = (w: Widget, name: string): unknown => (w as Record<string, unknown>)[name];

/**
 * What changed from `parent` to `next`: the dashboard fields that differ; widgets matched by
 * `widget_id` as added, removed, or changed with exactly the spec's fields whose values differ
 * (a field one side has and the other lacks differs, as when `widget_type` changes). Lists
 * keep the order of the spec's field list and of the widgets. `snippet_etag` is not compared.
 */
export function structuralDiff(parent: DashboardContent, next: DashboardContent): StructuralDiff {
  const before = new Map(parent.widgets.map((w) => [w.widget_id, w]));
  const kept = new Set(next.widgets.map((w) => w.widget_id));
  const added = next.widgets.filter((w) => !before.has(w.widget_id)).map((w) => w.widget_id);
  const removed = parent.widgets.filter((w) => !kept.has(w.widget_id)).map((w) => w.widget_id);
  const changed = next.widgets.flatMap((w) => {
    const old = before.get(w.widget_id);
    if (!old) return [];
    const fields = WIDGET_FIELDS.filter((f) => !structurallyEqual(field(old, f), field(w, f)));
    return fields.length > 0 ? [{ widget_id: w.widget_id, fields }] : [];
  });
  return {
    version: 1,
    dashboard_fields: DASHBOARD_FIELDS.filter((f) => !structurallyEqual(parent[f], next[f])),
    widgets: {
      added: { count: added.length, widget_ids: added },
      removed: { count: removed.length, widget_ids: removed },
      changed: { count: changed.length, widgets: changed },
    },
  };
}

/**
 * True when `next` would record nothing new: no difference the diff shows, and no widget
 * pinning another snippet etag. The order of the widgets array is not content (`position` is).
 */
export function sameContent(parent: DashboardContent, next: DashboardContent): boolean {
  const diff = structuralDiff(parent, next);
  if (diff.dashboard_fields.length > 0 || diff.widgets.added.count + diff.widgets.removed.count + diff.widgets.changed.count > 0) return false;
  const before = new Map(parent.widgets.map((w) => [w.widget_id, w]));
  return next.widgets.every((w) => field(w, 'snippet_etag') === field(before.get(w.widget_id)!, 'snippet_etag'));
}
