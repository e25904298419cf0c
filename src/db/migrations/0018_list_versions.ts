import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * A version per list, bumped by the database on every change of a row the list shows, so a
 * conditional read of the list (If-None-Match) is answered from one indexed row instead of its
 * page (src/http/list-cache.ts). Triggers, not the stores, bump it: every writer of these
 * tables (a cascade, another instance, an operator's SQL) moves the version too.
 *
 * `list` is `<table>:<owner>`: the API tokens of a workspace, the notifications of a user.
 */
export const VERSIONED_LISTS = [
  { table: 'api_tokens', owner: 'workspace_id' },
  { table: 'notifications', owner: 'user_id' },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('list_versions')
    .addColumn('list', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const { table, owner } of VERSIONED_LISTS) {
    const bump = (row: 'new' | 'old') => `insert into list_versions (list, version) values ('${table}:' || ${row}.${owner}, 1) on conflict (list) do update set version = list_versions.version + 1;`;
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
      await sql.raw(`create trigger ${table}_list_version after insert or update or delete on ${table} for each row execute function ${table}_list_version()`).execute(db);
    } else {
      await sql.raw(`create trigger ${table}_list_version_insert after insert on ${table} begin ${bump('new')} end`).execute(db);
      // Both lists, should a row ever change owner; the same list twice costs nothing.
      await sql.raw(`create trigger ${table}_list_version_update after update on ${table} begin ${bump('old')} ${bump('new')} end`).execute(db);
      await sql.raw(`create trigger ${table}_list_version_delete after delete on ${table} begin ${bump('old')} end`).execute(db);
    }
  }
}
