import { PostgresAdapter, sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { DB } from './tables.js';
import { prepared } from './prepared.js';
import type { JsonPageRow } from '../shared/cursor.js';

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

const listVersion = (list: unknown) => sql<number | string | null>`(select version from list_versions where list = ${list})`;
/** A versioned list's version (migration 0018), alone: for a conditional read, and for a page with no rows. */
export const versionOf = prepared((db, list: string) => db.selectFrom('list_versions').select('version').where('list', '=', list)).first;

/** A list's rows: `id` and its `json`, ordered by id descending, at most the `take` given as the last argument. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a query over any tables: Kysely's builder is invariant in its table set, and this only adds a clause
type RowsOf<Args extends unknown[]> = (db: Kysely<DB>, ...args: [...Args, take: number]) => SelectQueryBuilder<DB, any, { id: string; json: string }>;

/**
 * A keyset page of a list's JSON rows (`rows` asks for the page's size plus one) and the list's
 * version (migration 0018), read by one statement: the version in the page's own snapshot, and
 * no round trip of its own (it used to be a query before each page).
 *
 * PostgreSQL answers one row: the shown objects joined in the database, the count, the last shown
 * id and the version. The client's cost is per row and per round trip: a page of 50 tokens cost it
 * 190-250 µs of CPU as 51 rows and 110-160 µs as one (docs/benchmarks.md). SQLite answers the
 * rows, each with the version: its ordered aggregate over a window cost twice the rows' time
 * (measured the same way), and an in-process row costs little.
 */
export function preparedJsonPage<Args extends unknown[]>(rows: RowsOf<Args>) {
  // The last arguments are the page's own: its size (twice: each argument is used once) and the list.
  const aggregated = prepared((db, ...all: unknown[]) => {
    const [shown, shownAgain, list] = all.slice(-3);
    const numbered = rows(db, ...(all.slice(0, -3) as [...Args, number])).select(sql<number>`row_number() over (order by ${sql.ref('id')} desc)`.as('n'));
    return db
      .selectFrom(numbered.as('p'))
      .select([
        sql<string | null>`string_agg(p.json, ',' order by p.n) filter (where p.n <= ${shown})`.as('items'),
        sql<number | string>`count(*)`.as('rows'),
        sql<string | null>`max(case when p.n = ${shownAgain} then p.id end)`.as('last_id'),
        listVersion(list).as('version'),
      ]);
  });
  const perRow = prepared((db, ...all: unknown[]) => rows(db, ...(all.slice(0, -1) as [...Args, number])).select(listVersion(all[all.length - 1]).as('version')));

  return async (db: Kysely<DB>, list: string, take: number, ...args: Args): Promise<JsonPageRow> => {
    if (db.getExecutor().adapter instanceof PostgresAdapter) return (await aggregated.first(db, ...args, take, take - 1, take - 1, list)) as JsonPageRow;
    const found = (await perRow.all(db, ...args, take, list)) as { id: string; json: string; version: number | null }[];
    const shown = found.slice(0, take - 1);
    return {
      items: shown.map((r) => r.json).join(','),
      rows: found.length,
      last_id: shown[shown.length - 1]?.id ?? null,
      version: found.length > 0 ? found[0]!.version : ((await versionOf(db, list))?.version ?? null),
    };
  };
}
