import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from './tables.js';

/**
 * Rows the database writes as JSON itself, for the lists every client reads most. Materializing
 * a page as JavaScript objects (a value per column per row) and serializing it again took half
 * of such a request's time; SQLite's `json_object` and PostgreSQL's `json_build_object` write the
 * same text in C, and the answer is assembled from those strings (src/shared/cursor.ts).
 *
 * How a column becomes a JSON value:
 * - `value`: as stored (text, integer, null);
 * - `json`: a text column holding JSON, embedded as that JSON;
 * - `words`: a space-separated text column as an array of its words, `whenNull` when null.
 */
export type JsonField = { value: string } | { json: string } | { words: string; whenNull: readonly string[] };

const ident = (column: string) => sql.ref(column);

function sqliteValue(f: JsonField): RawBuilder<unknown> {
  if ('value' in f) return sql`${ident(f.value)}`;
  if ('json' in f) return sql`json(${ident(f.json)})`;
  const col = ident(f.words);
  // Scope words are [a-z:_] (their schema): none needs escaping inside a JSON string.
  return sql`case when ${col} is null then json(${JSON.stringify(f.whenNull)}) when ${col} = '' then json('[]') else json('["' || replace(${col}, ' ', '","') || '"]') end`;
}

function postgresValue(f: JsonField): RawBuilder<unknown> {
  if ('value' in f) return sql`${ident(f.value)}`;
  if ('json' in f) return sql`${ident(f.json)}::json`;
  const col = ident(f.words);
  return sql`coalesce(to_json(string_to_array(${col}, ' ')), ${JSON.stringify(f.whenNull)}::json)`;
}

/**
 * One row as a JSON object, its keys in the order given (the response schema's order), written
 * compactly as Node writes JSON (PostgreSQL's `json_build_object` puts spaces around `:`;
 * `row_to_json` of a row of the values does not).
 */
export function jsonObject(db: Kysely<DB>, fields: Readonly<Record<string, JsonField>>): RawBuilder<string> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const columns = Object.entries(fields).map(([key, f]) => sql`${postgresValue(f)} as ${sql.id(key)}`);
    return sql<string>`(select row_to_json(r)::text from (select ${sql.join(columns)}) r)`;
  }
  return sql<string>`json_object(${sql.join(Object.entries(fields).map(([key, f]) => sql`${sql.lit(key)}, ${sqliteValue(f)}`))})`;
}
