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
