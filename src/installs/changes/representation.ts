import type { RepositoryChangeRequestApprovalsTable, RepositoryChangeRequestsTable } from '../tables.js';
import type { ChangeRequest } from './schemas.js';
import { changeRef } from './machinery.js';

type Blocker = ChangeRequest['merge_blockers'][number];

/** Every reason the change request cannot be merged now (docs/spec-gaps.md, "Repository change requests"), in a fixed order; none: mergeable. */
export function mergeBlockers(cr: Pick<RepositoryChangeRequestsTable, 'state'>, approvals: number, requiredApprovals: number): Blocker[] {
  const out: Blocker[] = [];
  if (approvals < requiredApprovals) out.push('approvals_required');
  if (cr.state !== 'open') out.push('not_open');
  return out;
}

export function toChangeRequest(row: RepositoryChangeRequestsTable, approvals: readonly RepositoryChangeRequestApprovalsTable[], requiredApprovals: number): ChangeRequest {
  const blockers = mergeBlockers(row, approvals.length, requiredApprovals);
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    install_id: row.install_id,
    number: row.number,
    title: row.title,
    description: row.description,
    state: row.state,
    render_id: row.render_id,
    author_id: row.author_id,
    base_commit_sha: row.base_commit_sha,
    head_commit_sha: row.head_commit_sha,
    ref: changeRef(row.number),
    mergeable: blockers.length === 0,
    merge_blockers: blockers,
    approvals: approvals.map((a) => ({ user_id: a.user_id, approved_at: Number(a.approved_at) })),
    diff_stats: { added: row.diff_added, modified: row.diff_modified, removed: row.diff_removed },
    merged_by: row.merged_by,
    merged_at: row.merged_at === null ? null : Number(row.merged_at),
    closed_at: row.closed_at === null ? null : Number(row.closed_at),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    etag: row.etag,
  };
}
