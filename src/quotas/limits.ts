/**
 * Per-workspace quotas (docs/spec-gaps.md, "Token scopes"), each an operator's WSP_QUOTA_* setting (src/config.ts).
 * One tenant must not fill the shared disk or the render threads for the others.
 */
export interface Quotas {
  /** The most one render's files may hold together, in bytes. */
  renderOutputBytes: number;
  /** The most one install's git repository may hold on disk, in bytes. */
  repositoryBytes: number;
  /** Renders a workspace may start in an hour. */
  rendersPerHour: number;
  /** API tokens a workspace may hold at once. */
  apiTokens: number;
  /** Webhook endpoints a workspace may have. */
  webhooks: number;
  /**
   * The most all of a workspace's install repositories may take on disk together, in bytes:
   * without it the per-install quota multiplies by the installs a workspace makes.
   */
  workspaceRepositoryBytes: number;
  /**
   * Workspaces one user may own (WSP_WORKSPACES_PER_USER): a user owning that many creates no
   * other, else every per-workspace quota above multiplies by the workspaces one account makes.
   */
  workspacesPerUser: number;
}
