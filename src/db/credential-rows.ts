import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from './tables.js';
import { prepared } from './prepared.js';

/** The most lookups one statement answers: a statement per count up to it is compiled (and, on PostgreSQL, prepared per connection). */
export const MAX_CREDENTIALS_A_STATEMENT = 32;

interface Waiting<Row> {
  hash: string;
  resolve(row: Row | undefined): void;
  reject(err: unknown): void;
}

interface Batch<Row> {
  waiting: Waiting<Row>[];
}

/**
 * A credential's row by its token's hash (sessions, API tokens), compiled once (prepared.ts):
 * alone, or with the version of the list named `listPrefix` + the row's `owner` column in the same
 * statement (`list_version`, null before the list's first write), so that a read of the caller's
 * own list makes one round trip with its credential (src/http/list-cache.ts).
 *
 * The lookups started in one turn of the event loop are answered by one statement (`token_hash in
 * (...)`), sent once that turn's I/O has been handled (setImmediate): under load one turn reads
 * every connection's request, and one statement for all of them is one round trip and one trip
 * through Kysely and the driver instead of one each (docs/decisions.md, "Credentials looked up
 * together"). Nothing is kept between statements: each lookup's statement starts after its request
 * arrived, so a credential revoked before that (on any instance) is not found, as before.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a query over any tables: Kysely's builder is invariant in its table set, and this only adds a clause
export function credentialByHash<Row>(credential: (db: Kysely<DB>) => SelectQueryBuilder<DB, any, Row>, owner: string) {
  const ownList = (prefix: unknown) => sql<number | string | null>`(select version from list_versions where list = ${prefix} || ${sql.ref(owner)})`;
  type Found = Row & { token_hash: string };
  // One statement per number of hashes (and list or none), compiled on first use: hashes first, then the list's prefix.
  const statements = new Map<string, ReturnType<typeof statementOf>>();
  const statementOf = (count: number, withList: boolean) =>
    prepared((db, ...args: unknown[]) => {
      const hashes = args.slice(0, count);
      const q = credential(db).select(sql.ref('token_hash').as('token_hash'));
      return (withList ? q.select(ownList(args[count]).as('list_version')) : q).where('token_hash', 'in', hashes);
    });
  const statement = (count: number, withList: boolean) => {
    const key = `${count}${withList ? '+' : ''}`;
    let s = statements.get(key);
    if (!s) statements.set(key, (s = statementOf(count, withList)));
    return s;
  };

  // The batch being gathered, per database handle and list (a transaction is a handle of its own).
  const open = new WeakMap<Kysely<DB>, Map<string, Batch<Found>>>();

  async function run(db: Kysely<DB>, batch: Batch<Found>, listPrefix: string | undefined): Promise<void> {
    const { waiting } = batch;
    try {
      // The same token twice in one turn (two requests of one client) is asked for once.
      const hashes = [...new Set(waiting.map((w) => w.hash))];
      const args: unknown[] = listPrefix === undefined ? hashes : [...hashes, listPrefix];
      const rows = (await statement(hashes.length, listPrefix !== undefined).all(db, ...args)) as Found[];
      const byHash = new Map<string, Found>(rows.map((r) => [String(r.token_hash), r]));
      for (const w of waiting) w.resolve(byHash.get(w.hash));
    } catch (err) {
      for (const w of waiting) w.reject(err);
    }
  }

  function lookUp(db: Kysely<DB>, hash: string, listPrefix: string | undefined): Promise<Found | undefined> {
    let batches = open.get(db);
    if (!batches) open.set(db, (batches = new Map()));
    const key = listPrefix ?? '';
    let batch = batches.get(key);
    if (!batch) {
      const made: Batch<Found> = { waiting: [] };
      batches.set(key, (batch = made));
      const of = batches;
      setImmediate(() => {
        if (of.get(key) === made) of.delete(key);
        void run(db, made, listPrefix);
      });
    }
    const into = batch;
    // A full batch is closed: its statement is sent as planned, and the next lookup opens another.
    if (into.waiting.length + 1 >= MAX_CREDENTIALS_A_STATEMENT) batches.delete(key);
    return new Promise((resolve, reject) => into.waiting.push({ hash, resolve, reject }));
  }

  return {
    byHash: (db: Kysely<DB>, tokenHash: string): Promise<Found | undefined> => lookUp(db, tokenHash, undefined),
    byHashWithList: (db: Kysely<DB>, tokenHash: string, listPrefix: string): Promise<(Found & { list_version: number | string | null }) | undefined> =>
      lookUp(db, tokenHash, listPrefix) as Promise<(Found & { list_version: number | string | null }) | undefined>,
  };
}
