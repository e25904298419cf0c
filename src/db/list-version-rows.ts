import type { Kysely } from 'kysely';
import type { DB } from './tables.js';
import { prepared } from './prepared.js';

/** The most lists one statement asks for: a statement per count up to it is compiled (and, on PostgreSQL, prepared per connection). */
export const MAX_LISTS_A_STATEMENT = 64;

interface Waiting {
  lists: readonly string[];
  resolve(versions: [string, number][]): void;
  reject(err: unknown): void;
}

interface Batch {
  waiting: Waiting[];
  lists: Set<string>;
}

// A statement per number of lists, compiled once.
const statements = new Map<number, ReturnType<typeof statementOf>>();
const statementOf = (count: number) => prepared((db, ...lists: string[]) => db.selectFrom('list_versions').select(['list', 'version']).where('list', 'in', lists.slice(0, count)));
const statement = (count: number) => {
  let s = statements.get(count);
  if (!s) statements.set(count, (s = statementOf(count)));
  return s;
};

// The batch being gathered, per database handle.
const open = new WeakMap<Kysely<DB>, Batch>();

async function run(db: Kysely<DB>, batch: Batch): Promise<void> {
  try {
    const lists = [...batch.lists];
    const found = new Map((await statement(lists.length).all(db, ...lists)).map((r) => [r.list, Number(r.version)]));
    for (const w of batch.waiting) w.resolve(w.lists.map((list) => [list, found.get(list) ?? 0]));
  } catch (err) {
    for (const w of batch.waiting) w.reject(err);
  }
}

/**
 * The versions of `lists` (0 for a list never written), in their order. The lookups started in
 * one turn of the event loop are answered by one statement (`list in (...)`), sent once that turn's
 * I/O has been handled, as the credentials' are (src/db/credential-rows.ts; docs/decisions.md,
 * "List versions looked up together"): under load a turn reaches the list cache for many requests,
 * and one statement for all of them is one round trip instead of one each. Nothing is kept between
 * statements: each lookup's statement starts after its request reached the list cache, so it reads
 * every write committed before that, as a statement of its own did.
 */
export function listVersions(db: Kysely<DB>, lists: readonly string[]): Promise<[string, number][]> {
  let batch = open.get(db);
  // A batch that these lists would take past the bound is closed: its statement is sent as planned.
  if (batch && batch.lists.size + lists.length > MAX_LISTS_A_STATEMENT) {
    open.delete(db);
    batch = undefined;
  }
  if (!batch) {
    const made: Batch = { waiting: [], lists: new Set() };
    open.set(db, (batch = made));
    setImmediate(() => {
      if (open.get(db) === made) open.delete(db);
      void run(db, made);
    });
  }
  for (const list of lists) batch.lists.add(list);
  const into = batch;
  return new Promise((resolve, reject) => into.waiting.push({ lists, resolve, reject }));
}
