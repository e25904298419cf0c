import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from './tables.js';
import { prepared } from './prepared.js';

/** The most lookups one statement answers: a statement per count up to it is compiled (and, on PostgreSQL, prepared per connection). */
export const MAX_CREDENTIALS_A_STATEMENT = 32;

/** A list read beside a credential's row: `prefix` + the row's owner id + `suffix`. */
export interface ListPart {
  prefix: string;
  suffix: string;
}

/** The lists read beside a credential: a prefix alone (the owner's own list), or lists of parts. */
export type ListParts = string | readonly ListPart[];

export const listPartsOf = (lists: ListParts): readonly ListPart[] => (typeof lists === 'string' ? [{ prefix: lists, suffix: '' }] : lists);

/** The column the i-th list's version is read into. */
export const listVersionColumn = (i: number): string => (i === 0 ? 'list_version' : `list_version_${i}`);

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
 * alone, or with the versions of lists named by the row's `owner` column in the same statement
 * (`prefix` + owner + `suffix` each: `list_version`, `list_version_1`, ..., null before the list's
 * first write), so that a read of lists of the caller's own makes one round trip with its
 * credential (src/http/list-cache.ts).
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
  const ownList = (prefix: unknown, suffix: unknown) => sql<number | string | null>`(select version from list_versions where list = ${prefix} || ${sql.ref(owner)} || ${suffix})`;
  type Found = Row & { token_hash: string };
  // One statement per number of hashes and of lists, compiled on first use: hashes first, then each list's prefix and suffix.
  const statements = new Map<string, ReturnType<typeof statementOf>>();
  const statementOf = (count: number, lists: number) =>
    prepared((db, ...args: unknown[]) => {
      const hashes = args.slice(0, count);
      let q = credential(db).select(sql.ref('token_hash').as('token_hash'));
      for (let i = 0; i < lists; i++) q = q.select(ownList(args[count + 2 * i], args[count + 2 * i + 1]).as(listVersionColumn(i)));
      return q.where('token_hash', 'in', hashes);
    });
  const statement = (count: number, lists: number) => {
    const key = `${count}+${lists}`;
    let s = statements.get(key);
    if (!s) statements.set(key, (s = statementOf(count, lists)));
    return s;
  };

  // The batch being gathered, per database handle and list (a transaction is a handle of its own).
  const open = new WeakMap<Kysely<DB>, Map<string, Batch<Found>>>();

  async function run(db: Kysely<DB>, batch: Batch<Found>, lists: readonly ListPart[]): Promise<void> {
    const { waiting } = batch;
    try {
      // The same token twice in one turn (two requests of one client) is asked for once.
      const hashes = [...new Set(waiting.map((w) => w.hash))];
      const args: unknown[] = lists.length === 0 ? hashes : [...hashes, ...lists.flatMap((l) => [l.prefix, l.suffix])];
      const rows = (await statement(hashes.length, lists.length).all(db, ...args)) as Found[];
      const byHash = new Map<string, Found>(rows.map((r) => [String(r.token_hash), r]));
      for (const w of waiting) w.resolve(byHash.get(w.hash));
    } catch (err) {
      for (const w of waiting) w.reject(err);
    }
  }

  function lookUp(db: Kysely<DB>, hash: string, lists: readonly ListPart[]): Promise<Found | undefined> {
    let batches = open.get(db);
    if (!batches) open.set(db, (batches = new Map()));
    const key = lists.map((l) => `${l.prefix}\0${l.suffix}`).join('\0\0');
    let batch = batches.get(key);
    if (!batch) {
      const made: Batch<Found> = { waiting: [] };
      batches.set(key, (batch = made));
      const of = batches;
      setImmediate(() => {
        if (of.get(key) === made) of.delete(key);
        void run(db, made, lists);
      });
    }
    const into = batch;
    // A full batch is closed: its statement is sent as planned, and the next lookup opens another.
    if (into.waiting.length + 1 >= MAX_CREDENTIALS_A_STATEMENT) batches.delete(key);
    return new Promise((resolve, reject) => into.waiting.push({ hash, resolve, reject }));
  }

  return {
    byHash: (db: Kysely<DB>, tokenHash: string): Promise<Found | undefined> => lookUp(db, tokenHash, []),
    byHashWithList: (db: Kysely<DB>, tokenHash: string, lists: ListParts): Promise<(Found & { list_version: number | string | null }) | undefined> =>
      lookUp(db, tokenHash, listPartsOf(lists)) as Promise<(Found & { list_version: number | string | null }) | undefined>,
  };
}
