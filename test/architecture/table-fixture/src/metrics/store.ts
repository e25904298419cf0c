import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { preparedInsert } from '../db/prepared.js';

/** An area that owns no table, reading another's in every way the check knows. */
export const metricsStore = {
  // Violations: another area's table, from and joined.
  renders: (db: Kysely<DB>, workspaceId: string) =>
    db.selectFrom('renders as r').innerJoin('installs as i', 'i.id', 'r.install_id').select(['r.id', 'i.name']).where('r.workspace_id', '=', workspaceId).execute(),

  // Violation: another area's table in raw SQL.
  count: (db: Kysely<DB>, workspaceId: string) => sql<{ n: number }>`select count(*) as n from renders where workspace_id = ${workspaceId}`.execute(db),

  // Violation: another area's table through sql.table.
  all: (db: Kysely<DB>) => sql<{ id: string }>`select id from ${sql.table('installs')}`.execute(db),

  // Violation: a table the check cannot read.
  ids: (db: Kysely<DB>, table: 'renders' | 'installs') => db.selectFrom(table).select('id').execute(),

  // Violation: another area's table handed to a machinery function that takes one.
  insertRender: preparedInsert('renders', ['id', 'workspace_id', 'install_id', 'created_at']),
};

/** Allowed: a string that merely reads like SQL is no query. */
export const note = 'read from renders';
