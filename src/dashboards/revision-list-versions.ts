import { canonicalId } from '../shared/ids.js';

/**
 * What a page of a dashboard's revisions is made from, as list_versions names it (migration
 * 0020): the dashboard's revisions (and its existence), and the workspace's snippets, which each
 * revision's drift compares its pins with.
 */
export const revisionListVersions = (workspaceId: string, rawDashboardId: string): readonly string[] => [
  `dashboard_revisions:${workspaceId}:${canonicalId('dash', rawDashboardId)}`,
  `snippets:${workspaceId}`,
];

/**
 * The same lists as an API token's statement reads them (src/db/credential-rows.ts): named by
 * the token's workspace, in the order above, so that a read of the revisions makes one statement
 * with its credential (a session's, named by its user, reads them on its own).
 */
export const revisionListsOfWorkspace = (rawDashboardId: string) => [
  { prefix: 'dashboard_revisions:', suffix: `:${canonicalId('dash', rawDashboardId)}` },
  { prefix: 'snippets:', suffix: '' },
];
