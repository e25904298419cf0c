/** Renders started by install creation, PATCH or an automatic update: render, then commit. */
export const RENDER_RUN = 'render.run';
/**
 * A restore's commit is made and recorded in the request; this job moves `main` to it if the
 * request could not (src/installs/renders/landing.ts), verifies it and completes the render.
 */
export const RENDER_RESTORE = 'render.restore';
/** Attempts of a render job before its render is marked failed (git or database trouble). */
export const RENDER_MAX_ATTEMPTS = 5;

/** Periodic (WSP_REPOSITORY_GC_HOURS): every install's repository packed, pruned and measured. */
export const REPOSITORY_MAINTENANCE = 'installs.repository_maintenance';

/** Enqueued with every new version; installs that follow updates move to it (auto-updates.ts). */
export const VERSION_PUBLISHED = 'package.version_published';

/**
 * DELETE /v1/installs/{id}: removes the deleted install's repository from disk, once no job of
 * a render the deletion canceled is still at work in it (src/installs/deletion.ts).
 */
export const INSTALL_REPOSITORY_DELETE = 'installs.repository_delete';

/**
 * Queued by every `:merge` of a change request, a little after it: moves `main` to the merged
 * head if the request could not (it died between its commit and the branch move, or the branch
 * was locked). Usually finds it done (src/installs/changes/land-job.ts).
 */
export const CHANGE_REQUEST_LAND = 'installs.change_request_land';

/** Operation kinds a client sees on GET /v1/operations/{id}. */
export const OP_INSTALL_RENDER = 'install.render';
export const OP_INSTALL_RESTORE = 'install.restore';
export const OP_INSTALL_DELETE = 'install.delete';

export interface InstallRepositoryDelete {
  install_id: string;
  /** The operations of the renders the deletion canceled: their jobs may still be writing objects. */
  wait_for_operation_ids: string[];
}

export interface RenderJob {
  render_id: string;
}

export interface VersionPublished {
  workspace_id: string;
  package_id: string;
  version_id: string;
}

export interface ChangeRequestLand {
  install_id: string;
  change_request_id: string;
}
