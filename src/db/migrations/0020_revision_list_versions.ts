import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Versions for what a page of a dashboard's revisions shows (src/http/list-cache.ts): its
 * revisions (`dashboard_revisions:<workspace>:<dashboard>`), and the workspace's snippets, whose
 * etag and state each revision's drift is computed from (`snippets:<workspace>`). Bumped by
 * triggers like 0018's, so every writer moves them.
 *
 * The dashboards table needs none: a dashboard is made with its first revision and its delete
 * cascades to its revisions, whose delete bumps the version (the page is then a 404), while its
 * updates (every write begins with a no-op UPDATE that locks the row) change no revision. The
 * snippets' version is per workspace: a page's drift may name any of its snippets, and snippet
 * writes are few beside reads.
 */
const VERSIONED = [
  { table: 'dashboard_revisions', list: (row: string) => `'dashboard_revisions:' || ${row}.workspace_id || ':' || ${row}.dashboard_id`, on: ['insert', 'update', 'delete'] },
  { table: 'snippets', list: (row: string) => `'snippets:' || ${row}.workspace_id`, on: ['insert', 'update', 'delete'] },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const { table, list, on } of VERSIONED) {
    const bump = (row: 'new' | 'old') => `insert into list_versions (list, version) values (${list(row)}, 1) on conflict (list) do update set version = list_versions.version + 1;`;
    if (postgres) {
      await sql
        .raw(
          `create function ${table}_list_version() returns trigger language plpgsql as $$
          begin
            if tg_op <> 'INSERT' then ${bump('old')} end if;
            if tg_op <> 'DELETE' then ${bump('new')} end if;
            return null;
          end
          $$`,
        )
        .execute(db);
      await sql.raw(`create trigger ${table}_list_version after ${on.join(' or ')} on ${table} for each row execute function ${table}_list_version()`).execute(db);
    } else {
      for (const op of on) {
        const body = op === 'insert' ? bump('new') : op === 'delete' ? bump('old') : `${bump('old')} ${bump('new')}`;
        await sql.raw(`create trigger ${table}_list_version_${op} after ${op} on ${table} begin ${body} end`).execute(db);
      }
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
