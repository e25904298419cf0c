import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';

/** Every row of every table of the app's database (its own schema on PostgreSQL), as JSON text. */
export async function dumpAllRows(database: Database): Promise<string> {
  const db = database.db;
  const tables =
    database.engine === 'postgres'
      ? (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)).rows
      : (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)).rows;
  if (tables.length < 5) throw new Error(`expected the app's tables, found ${tables.map((t) => t.name).join(', ')}`);
  const out: string[] = [];
  for (const { name } of tables) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)).rows;
    out.push(`${name}: ${JSON.stringify(rows)}`);
  }
  return out.join('\n');
}
