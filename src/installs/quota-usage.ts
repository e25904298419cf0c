import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { renderStore } from './renders/store.js';
import { installStore } from './store.js';

/** The installs area's share of a workspace's quota figures (GET /v1/workspaces/{id}/quotas). */
export async function installQuotaUsage(db: Kysely<DB>, workspaceId: string, now: number) {
  const renders = await renderStore.madeSince(db, workspaceId, now - 3600 + 1);
  const largest = await db
    .selectFrom('installs')
    .select(['id', 'repository_bytes'])
    .where('workspace_id', '=', workspaceId)
    .where('repository_bytes', 'is not', null)
    .orderBy('repository_bytes', 'desc')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return {
    rendersLastHour: renders.count,
    repositoriesTotal: await installStore.repositoryBytesTotal(db, workspaceId),
    largestRepository: largest ? { installId: largest.id, bytes: Number(largest.repository_bytes) } : null,
  };
}
