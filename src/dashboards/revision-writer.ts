import type { Kysely } from 'kysely';
import type { DashboardRevisionsTable, RevisionSource } from './tables.js';
import type { DB } from '../db/tables.js';
import { newId } from '../shared/ids.js';
import { newEtag } from '../shared/etag.js';
import { contentColumns, toContent } from './representation.js';
import { structuralDiff } from './diff.js';
import { dashboardStore, type DashboardView } from './store.js';
import type { DashboardContent } from './schemas/content.js';

export interface RevisionMeta {
  source: RevisionSource;
  author_id: string;
  summary: string | null;
  restored_from_revision_id: string | null;
  created_at: number;
}

/** The row of a revision following `parent` (null for a first one), with its diff against it. */
export function revisionRow(
  dashboard: { id: string; workspace_id: string },
  parent: { id: string; seq: number; content: DashboardContent } | null,
  content: DashboardContent,
  meta: RevisionMeta,
): DashboardRevisionsTable {
  return {
    id: newId('drev'),
    workspace_id: dashboard.workspace_id,
    dashboard_id: dashboard.id,
    seq: parent ? parent.seq + 1 : 1,
    parent_revision_id: parent?.id ?? null,
    ...meta,
    ...contentColumns(content),
    structural_diff: parent ? JSON.stringify(structuralDiff(parent.content, content)) : null,
  };
}

/**
 * Appends a revision to a dashboard locked by the caller's transaction and makes it current:
 * a new revision, a new etag, nothing else changed.
 */
export async function appendRevision(trx: Kysely<DB>, head: DashboardView, content: DashboardContent, meta: RevisionMeta): Promise<DashboardView> {
  const row = revisionRow(head, { id: head.current_revision_id, seq: head.seq, content: toContent(head) }, content, meta);
  await dashboardStore.insertRevision(trx, row);
  const next = { current_revision_id: row.id, etag: newEtag(), updated_at: meta.created_at };
  await dashboardStore.setHead(trx, head.id, next);
  return { ...head, ...contentColumns(content), ...next, seq: row.seq };
}
