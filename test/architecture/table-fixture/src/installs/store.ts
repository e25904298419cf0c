import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';

export const installStore = {
  /** Allowed: the area's own tables, joined. A comment naming db.selectFrom('jobs') is no query. */
  withRenders: (db: Kysely<DB>, workspaceId: string) =>
    db.selectFrom('installs as i').innerJoin('renders', 'renders.install_id', 'i.id').select(['i.id', 'renders.created_at']).where('i.workspace_id', '=', workspaceId).execute(),

  // Violation: a machinery table no allowance gives this area.
  dropJobs: (db: Kysely<DB>) => db.deleteFrom('jobs').execute(),
};
