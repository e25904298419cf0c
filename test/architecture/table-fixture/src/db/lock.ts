import type { Kysely } from 'kysely';
import type { DB } from './tables.js';

// Violation: the machinery naming an area's table (merged into DB, so it compiles).
export const lockInstall = (db: Kysely<DB>, id: string) => db.updateTable('installs').set({ name: 'locked' }).where('id', '=', id).execute();

/** Allowed: the machinery's own table. */
export const queued = (db: Kysely<DB>) => db.selectFrom('jobs').select('id').where('state', '=', 'queued').execute();
