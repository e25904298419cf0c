import { createHash } from 'node:crypto';
import { createQueryId, PostgresAdapter, RawNode, type Compilable, type CompiledQuery, type Kysely } from 'kysely';
import type { DB } from './tables.js';

/**
 * The SQL of the prepared queries on PostgreSQL, with the name each is prepared under on a
 * connection (src/db/database.ts): PostgreSQL then parses and plans it once per connection, not
 * at every call. Only these: their SQL is fixed and names its columns, so no migration changes the
 * type of their rows.
 */
export const namedStatements = new Map<string, string>();

/** Stands for the i-th argument while a query is built once; never reaches a database. */
class Slot {
  constructor(readonly index: number) {}
}

interface Template {
  sql: string;
  /** What the driver is told the query is: SQL given as text, as `CompiledQuery.raw` says. */
  query: RawNode;
  /** For each parameter of the SQL, the argument it takes, or -1 for a constant of the query. */
  from: number[];
  /** The query's constants, at their parameters' places. */
  constants: readonly unknown[];
}

/**
 * A query Kysely builds and compiles once per engine, then runs with each call's values. For the
 * statements every request runs (the credential lookups): building and compiling the query was
 * about as long as SQLite took to answer it. `build` must use each argument once, as a value
 * (a comparison's right side, a limit), and must not branch on it: the first compile checks that
 * every argument reaches the SQL exactly once and refuses the query otherwise.
 */
export function prepared<Args extends unknown[], Row>(build: (db: Kysely<DB>, ...args: Args) => Compilable<Row>) {
  // By the engine's adapter: the SQL depends on the dialect only, and transactions share it.
  const templates = new WeakMap<object, Template>();
  const template = (db: Kysely<DB>, arity: number): Template => {
    const adapter = db.getExecutor().adapter;
    let t = templates.get(adapter);
    if (!t) {
      // eslint-disable-next-line no-restricted-syntax -- the slots stand in for the arguments while the statement is built once; each is bound to a real value when it runs
      const slots = Array.from({ length: arity }, (_, i) => new Slot(i)) as unknown as Args;
      const compiled = build(db, ...slots).compile();
      const from = compiled.parameters.map((p) => (p instanceof Slot ? p.index : -1));
      for (let i = 0; i < arity; i++) {
        if (from.filter((f) => f === i).length !== 1) throw new Error(`prepared query: argument ${i} must appear exactly once as a value (${compiled.sql})`);
      }
      t = { sql: compiled.sql, query: RawNode.createWithSql(compiled.sql), from, constants: compiled.parameters };
      templates.set(adapter, t);
      if (adapter instanceof PostgresAdapter) namedStatements.set(compiled.sql, `wsp_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 24)}`);
    }
    return t;
  };
  // The query handed to Kysely is one literal of one shape, its node made once: per call,
  // CompiledQuery.raw froze a new node, two arrays and the parameters, made by a new closure,
  // and some of it reached the old generation (docs/benchmarks.md, round twelve).
  const all = async (db: Kysely<DB>, ...args: Args): Promise<Row[]> => {
    const t = template(db, args.length);
    const parameters: unknown[] = [];
    for (let i = 0; i < t.from.length; i++) {
      const f = t.from[i]!;
      parameters.push(f >= 0 ? args[f] : t.constants[i]);
    }
    const query: CompiledQuery<Row> = { sql: t.sql, query: t.query, parameters, queryId: createQueryId() };
    return (await db.executeQuery(query)).rows;
  };
  return { all, first: async (db: Kysely<DB>, ...args: Args): Promise<Row | undefined> => (await all(db, ...args))[0] };
}

/**
 * An INSERT of one whole row of `table`, compiled once (as `prepared`): every column listed, in
 * this order, each its own parameter. For the rows every write inserts (its event, a secret's
 * version): on PostgreSQL the statement is then also parsed and planned once per connection.
 */
// eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- `& string` keeps T a string literal when DB gains a non-string key
export function preparedInsert<T extends keyof DB & string, const C extends readonly (keyof DB[T] & string)[]>(
  table: T,
  // Every column, so that a column added to the table later cannot be left out silently.
  columns: C & ([Exclude<keyof DB[T], C[number]>] extends [never] ? unknown : { missing: Exclude<keyof DB[T], C[number]> }),
) {
  const insert = prepared((db, ...values: unknown[]) => db.insertInto(table).values(Object.fromEntries(columns.map((c, i) => [c, values[i]])) as never));
  return async (db: Kysely<DB>, row: DB[T]): Promise<void> => {
    await insert.all(db, ...columns.map((c) => row[c]));
  };
}
