/**
 * Per-workspace quotas (CONTRACT §12), each an operator's WSP_QUOTA_* setting (src/config.ts).
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
}
