/**
 * The dashboards area's tables, as stored: snippets, dashboards and their revisions. Each joins
 * `DB` here, by declaration merging (src/db/tables.ts says why); the area's modules import their
 * row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    snippets: SnippetsTable;
    dashboards: DashboardsTable;
    dashboard_revisions: DashboardRevisionsTable;
  }
}

export interface SnippetsTable {
  id: string;
  workspace_id: string;
  name: string;
  source: string;
  display_type: string | null;
  state: 'active' | 'archived';
  etag: string;
  created_at: number;
  updated_at: number;
}

/** A dashboard's head: its content is that of `current_revision_id`. */
export interface DashboardsTable {
  id: string;
  workspace_id: string;
  current_revision_id: string;
  etag: string;
  created_at: number;
  updated_at: number;
}

export type RevisionSource = 'manual' | 'automatic' | 'restore' | 'reset' | 'backfill';

/** Immutable (triggers refuse UPDATE, and DELETE while the dashboard exists). */
export interface DashboardRevisionsTable {
  id: string;
  workspace_id: string;
  dashboard_id: string;
  /** 1, 2, ... per dashboard. */
  seq: number;
  parent_revision_id: string | null;
  restored_from_revision_id: string | null;
  source: RevisionSource;
  author_id: string;
  summary: string | null;
  name: string;
  description: string | null;
  purpose: 'workspace_overview' | 'custom';
  /** JSON array */
  filter_definitions: string;
  /** JSON object */
  default_filter_values: string;
  /** JSON array */
  widgets: string;
  /** JSON object, or null for a first revision */
  structural_diff: string | null;
  created_at: number;
}
