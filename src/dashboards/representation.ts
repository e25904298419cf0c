import type { DashboardRevisionsTable } from './tables.js';
import type { ContentColumns, DashboardView } from './store.js';
import type { DashboardContent } from './schemas/content.js';
import type { Dashboard } from './schemas/dashboard.js';
import type { DashboardRevision, SnippetEtagDrift, StructuralDiff } from './schemas/revision.js';

/** Content as stored (JSON text) to content as shown. */
export function toContent(row: ContentColumns): DashboardContent {
  return {
    name: row.name,
    description: row.description,
    purpose: row.purpose,
    filter_definitions: JSON.parse(row.filter_definitions) as DashboardContent['filter_definitions'],
    default_filter_values: JSON.parse(row.default_filter_values) as DashboardContent['default_filter_values'],
    widgets: JSON.parse(row.widgets) as DashboardContent['widgets'],
  };
}

export function contentColumns(content: DashboardContent): ContentColumns {
  return {
    name: content.name,
    description: content.description,
    purpose: content.purpose,
    filter_definitions: JSON.stringify(content.filter_definitions),
    default_filter_values: JSON.stringify(content.default_filter_values),
    widgets: JSON.stringify(content.widgets),
  };
}

export function toDashboard(row: DashboardView): Dashboard {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    ...toContent(row),
    current_revision_id: row.current_revision_id,
    etag: row.etag,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A stored revision as shown, given its content (parsed once by the caller) and its drift now. */
export function toRevision(row: DashboardRevisionsTable, content: DashboardContent, drift: SnippetEtagDrift[]): DashboardRevision {
  return {
    id: row.id,
    dashboard_id: row.dashboard_id,
    workspace_id: row.workspace_id,
    parent_revision_id: row.parent_revision_id,
    restored_from_revision_id: row.restored_from_revision_id,
    source: row.source,
    author_id: row.author_id,
    summary: row.summary,
    ...content,
    structural_diff: row.structural_diff === null ? null : (JSON.parse(row.structural_diff) as StructuralDiff),
    snippet_etag_drift: drift,
    created_at: row.created_at,
  };
}
