import type { RendersTable } from '../tables.js';
import type { Render } from './schemas.js';

export const toRender = (row: RendersTable): Render => ({
  id: row.id,
  workspace_id: row.workspace_id,
  install_id: row.install_id,
  render_hash: row.render_hash,
  state: row.state,
  created_at: row.created_at,
  updated_at: row.updated_at,
  operation_id: row.operation_id,
  repository_change_request_id: row.change_request_id,
  commit_sha: row.commit_sha,
  package_version_id: row.package_version_id,
  restored_from_render_id: row.restored_from_render_id,
  message: row.message,
});

/** What a render's operation records as its result. */
export const renderOutcome = (row: Pick<RendersTable, 'id' | 'state' | 'commit_sha'> & { change_request_id?: string | null }) =>
  // docs/spec-gaps.md, "Repository change requests": a render that opened a change request is done with exactly these two.
  row.state === 'awaiting_merge' && row.change_request_id
    ? { render_id: row.id, repository_change_request_id: row.change_request_id }
    : { render_id: row.id, state: row.state, commit_sha: row.commit_sha };
