/**
 * What the platform metrics (src/platform-metrics) read of the installs area: its rows, counted
 * by its own store, so another area names none of its tables.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { Buckets } from '../events/minute-counts.js';
import { renderStore } from './renders/store.js';

/** The workspace's renders created in each bucket (`b`: the bucket's index, `n`: how many), of one install or all, in any state or one. */
export const renderCountsByBucket = (db: Kysely<DB>, workspaceId: string, b: Buckets, f: { install?: string | undefined; status?: string | undefined }) =>
  renderStore.countsByBucket(db, workspaceId, b, f);
