import type SqliteDatabase from 'better-sqlite3';
import { DeleteQueryNode, InsertQueryNode, SelectQueryNode, UpdateQueryNode, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely';

/**
 * Kysely's driver for the embedded SQLite file: one connection that writes and one that reads,
 * and the write transactions of one turn of the event loop committed together.
 *
 * A COMMIT writes every page the transaction changed to the WAL: most of a small write's cost
 * (175 µs of 300 for a secret version), and the same pages again for the next write. So write
 * transactions join a group: each runs in its own savepoint of one SQLite transaction, one after
 * another on the writing connection as before; one that is done releases its savepoint and
 * waits, and the group commits once nothing more joins it (at the end of the turn, or before a
 * statement that must run alone). Nobody hears of a write's success before its COMMIT: a
 * transaction's promise settles after the group's, and a COMMIT that fails fails every
 * transaction of the group. One that fails rolls back to its savepoint, undoing its work only,
 * and is answered after the group's COMMIT too. A write of rows outside a transaction is a
 * member by itself.
 *
 * Queries outside a transaction read from the second connection, which sees committed data
 * only: never a group's work before its COMMIT, and never waiting for the writer.
 */
export class GroupCommitSqliteDriver implements Driver {
  private readonly mutex = new Mutex();
  private group: Group | null = null;
  /** The last error of a statement on the writer: what ends a group SQLite rolled back itself. */
  private lastError: unknown;

  constructor(
    private readonly writer: SqliteDatabase.Database,
    private readonly reader: SqliteDatabase.Database,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Lease(this);
  }

  /** A statement outside any transaction. */
  async runAlone<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const node = query.query;
    const writesRows = InsertQueryNode.is(node) || UpdateQueryNode.is(node) || DeleteQueryNode.is(node);
    if (!writesRows) {
      const stmt = this.reader.prepare(query.sql);
      if (stmt.reader && stmt.readonly) return run<R>(stmt, query);
    }
    const unlock = await this.mutex.lock();
    if (writesRows) {
      // One write of rows (an Idempotency-Key's claim, a credential's last use): a transaction of
      // its own statement in the group.
      let group: Group;
      try {
        group = this.joinGroup();
      } catch (err) {
        unlock();
        throw err;
      }
      let result: QueryResult<R>;
      try {
        result = this.onWriter<R>(query);
        this.exec(`release ${MEMBER}`);
      } catch (err) {
        await this.endFailedMember(group, unlock);
        throw err;
      }
      await this.awaitCommit(group, unlock);
      return result;
    }
    // A checkpoint, a schema change, SQL written by hand: alone on the writer, after the open
    // group commits.
    try {
      this.commitGroup();
      return this.onWriter<R>(query);
    } finally {
      unlock();
    }
  }

  onWriter<R>(query: CompiledQuery): QueryResult<R> {
    try {
      return run<R>(this.writer.prepare(query.sql), query);
    } catch (err) {
      this.lastError = err;
      throw err;
    }
  }

  streamOnReader<R>(query: CompiledQuery): IterableIterator<R> {
    if (!SelectQueryNode.is(query.query)) throw new Error('SQLite streams SELECT queries only');
    return this.reader.prepare(query.sql).iterate(query.parameters) as IterableIterator<R>;
  }

  private exec(sql: string): void {
    this.writer.prepare(sql).run();
  }

  /**
   * Write transactions begin with BEGIN IMMEDIATE: the write lock is taken at the start (waiting up
   * to busy_timeout for it), not at the first write. A deferred transaction that reads and then
   * writes fails with SQLITE_BUSY_SNAPSHOT, which no busy timeout covers, when another process
   * (`wsp admin`, a rotation, a second server) committed after its first read. A transaction
   * declared read only stays deferred and outside any group: the open group commits first.
   */
  async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    const lease = connection as Lease;
    lease.unlock = await this.mutex.lock();
    if (settings?.accessMode === 'read only') {
      this.commitGroup();
      this.exec('begin');
      lease.state = 'alone';
      return;
    }
    this.joinGroup();
    lease.state = 'member';
  }

  /** Opens the caller's savepoint in the open group, or in a new one (the caller holds the writer). */
  private joinGroup(): Group {
    // A group whose transaction SQLite ended without a member seeing it fails before it is joined.
    if (this.group && !this.writer.inTransaction) this.failGroup(this.lastError);
    if (!this.group) {
      this.exec('begin immediate');
      this.lastError = undefined;
      const group: Group = { members: [] };
      this.group = group;
      setImmediate(() => void this.flush(group));
    }
    this.exec(`savepoint ${MEMBER}`);
    return this.group;
  }

  /** Hands the writer on and waits for the group's COMMIT: its failure is this member's. */
  private awaitCommit(group: Group, unlock: () => void): Promise<void> {
    const committed = new Promise<void>((resolve, reject) => group.members.push({ resolve, reject }));
    unlock();
    return committed;
  }

  /**
   * A member that failed: its savepoint rolled back, it waits for the group to settle before its
   * error goes on. A failure may come from a row of an earlier member (a unique name taken); the
   * caller reading that row outside a transaction must find it committed.
   */
  private async endFailedMember(group: Group | null, unlock: () => void): Promise<void> {
    let settled: Promise<void> | undefined;
    try {
      if (!group) {
        // Only SQL written by hand inside the transaction (a ROLLBACK, then a BEGIN) gets here.
        if (this.writer.inTransaction) this.exec('rollback');
      } else if (!this.writer.inTransaction) {
        // SQLite itself rolls a transaction back on some errors (SQLITE_FULL, SQLITE_IOERR,
        // SQLITE_NOMEM, SQLITE_BUSY in a statement): the members before this one lost their work.
        this.failGroup(this.lastError);
      } else {
        this.exec(`rollback to ${MEMBER}`);
        this.exec(`release ${MEMBER}`);
        settled = new Promise<void>((resolve) => group.members.push({ resolve, reject: () => resolve() }));
      }
    } finally {
      // Whatever happens here, the writer is handed on: a lost unlock would stop every write.
      unlock();
    }
    await settled;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    if (lease.state === 'alone') {
      this.exec('commit');
      lease.state = 'none';
      return;
    }
    this.exec(`release ${MEMBER}`);
    lease.state = 'none';
    // The writer goes to the next transaction now; this one's caller waits for the COMMIT.
    await this.awaitCommit(this.group!, lease.take());
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    // Kysely rolls back a transaction whose commit failed: one that had handed the writer on was
    // settled with its group, and the writer may be another group's by now.
    if (!lease.unlock) return;
    const state = lease.state;
    lease.state = 'none';
    if (state === 'member') return this.endFailedMember(this.group, lease.take());
    // A ROLLBACK after SQLite ended the transaction itself would fail with "no transaction is
    // active" and replace the error that ended it.
    if (this.writer.inTransaction) this.exec('rollback');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as Lease).release();
  }

  async destroy(): Promise<void> {
    const unlock = await this.mutex.lock();
    try {
      this.commitGroup();
    } finally {
      unlock();
      this.writer.close();
      this.reader.close();
    }
  }

  /** The end of the turn: the group commits once the transaction on the writer (if any) is done. */
  private async flush(group: Group): Promise<void> {
    const unlock = await this.mutex.lock();
    try {
      if (this.group === group) this.commitGroup();
    } finally {
      unlock();
    }
  }

  /** Commits the open group (the caller holds the writer) and answers each of its members. */
  private commitGroup(): void {
    const group = this.group;
    if (!group) return;
    if (!this.writer.inTransaction) return this.failGroup(this.lastError);
    this.group = null;
    try {
      this.exec('commit');
    } catch (err) {
      if (this.writer.inTransaction) this.exec('rollback');
      for (const m of group.members) m.reject(err);
      return;
    }
    for (const m of group.members) m.resolve();
  }

  private failGroup(cause: unknown): void {
    const group = this.group;
    this.group = null;
    const err = cause ?? new Error('the transaction was rolled back before its commit');
    for (const m of group?.members ?? []) m.reject(err);
  }
}

const MEMBER = 'wsp_group_member';

interface Group {
  /** The transactions done and waiting for the group's COMMIT. */
  members: { resolve(): void; reject(err: unknown): void }[];
}

function run<R>(stmt: SqliteDatabase.Statement, query: CompiledQuery): QueryResult<R> {
  const parameters = query.parameters as unknown[];
  if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** One holder of the writer at a time, first come first served. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves, once the writer is the caller's, to the function that hands it on. */
  lock(): Promise<() => void> {
    let unlock!: () => void;
    const next = new Promise<void>((resolve) => (unlock = resolve));
    const turn = this.tail.then(() => unlock);
    this.tail = next;
    return turn;
  }
}

/** What Kysely holds between acquiring and releasing a connection: the writer once a transaction begins. */
class Lease implements DatabaseConnection {
  state: 'none' | 'member' | 'alone' = 'none';
  unlock: (() => void) | null = null;

  constructor(private readonly driver: GroupCommitSqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.state === 'none') return this.driver.runAlone<R>(query);
    try {
      return Promise.resolve(this.driver.onWriter<R>(query));
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on whatever the driver threw, as an async driver would
      return Promise.reject(err);
    }
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (this.state !== 'none') throw new Error('SQLite streams outside a transaction only');
    for (const row of this.driver.streamOnReader<R>(query)) yield { rows: [row] };
  }

  release(): void {
    this.take()();
  }

  /** The function that hands the writer on, now the caller's to call (a no-op if not held). */
  take(): () => void {
    const unlock = this.unlock;
    this.unlock = null;
    return unlock ?? (() => {});
  }
}
