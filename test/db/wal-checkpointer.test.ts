import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase, sqliteFile } from '../../src/db/database.js';
import { BACKSTOP_PAGES, CHECKPOINT_INTERVAL_MS, startWalCheckpointer } from '../../src/db/wal-checkpointer.js';
import { secretStore } from '../../src/secrets/store.js';

/**
 * A server's SQLite checkpoints on a thread of their own (src/db/wal-checkpointer.ts), and the
 * secrets' flush of destroyed pages beside it. SQLite's own, whatever engine the suite runs on.
 */
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-checkpoints-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

const PAGE = 4096;
/** Fewer pages than the writer's backstop, more than SQLite's default checkpoint (1,000). */
const PAGES = 1500;
const fillLog = `insert into t (v) select randomblob(${PAGE - 200}) from (with recursive c(x) as (select 1 union all select x + 1 from c where x < ${PAGES}) select x from c)`;

/** A database of SQLite's default checkpoints with a log of PAGES pages. */
async function withFullLog(name: string) {
  const dataDir = path.join(work, name);
  const database = await openDatabase({ dataDir });
  await sql.raw('create table t (id integer primary key, v blob)').execute(database.db);
  await sql.raw(fillLog).execute(database.db);
  return { database, file: sqliteFile(dataDir) };
}

/** A writer in WAL mode on a new file, with the table the log is filled through. */
function walWriter(name: string) {
  const file = path.join(work, name);
  const writer = new Sqlite(file);
  writer.pragma('journal_mode = WAL');
  writer.exec('create table t (id integer primary key, v blob)');
  return { file, writer };
}

async function until(what: string, done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    assert.ok(waited < 10_000, `not within 10 s: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('the thread copies the log back into the database; the writer checkpoints itself only past the backstop', async () => {
  const { file, writer } = walWriter('thread.db');
  const checkpointer = startWalCheckpointer(file, writer, CHECKPOINT_INTERVAL_MS, 0);
  try {
    assert.equal(writer.pragma('wal_autocheckpoint', { simple: true }), BACKSTOP_PAGES);
    const before = fs.statSync(file).size;
    writer.exec(fillLog);
    // The writer's commit did not copy the pages (it would past 1,000 with SQLite's default)...
    assert.ok(fs.statSync(file).size < before + PAGES * PAGE, 'the writer checkpointed on its own commit');
    // ...the thread does, off this thread.
    await until('the database file holds the log', () => fs.statSync(file).size >= PAGES * (PAGE - 200));
  } finally {
    await checkpointer.stop();
  }
  // Stopped: nothing copies any more, and stopping again is a no-op.
  writer.exec(fillLog);
  const size = fs.statSync(file).size;
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(fs.statSync(file).size, size);
  await checkpointer.stop();
  writer.close();
});

test('the thread starts only after its delay (the writer has its backstop meanwhile); stopped before that, it never starts', async () => {
  const { file, writer } = walWriter('delayed.db');
  const delayed = startWalCheckpointer(file, writer, CHECKPOINT_INTERVAL_MS, 2000);
  assert.equal(writer.pragma('wal_autocheckpoint', { simple: true }), BACKSTOP_PAGES, 'the backstop is set at once');
  const before = fs.statSync(file).size;
  writer.exec(fillLog);
  // A thread started at once copies the log within a few hundred milliseconds (the test above).
  await new Promise((r) => setTimeout(r, 400));
  assert.ok(fs.statSync(file).size < before + PAGES * PAGE, 'nothing copied before the delay');
  await until('the database file holds the log', () => fs.statSync(file).size >= PAGES * (PAGE - 200));
  await delayed.stop();

  // Stopped before its delay: stop() does not wait, and no thread ever copies anything.
  const never = startWalCheckpointer(file, writer, CHECKPOINT_INTERVAL_MS, 300);
  await never.stop();
  writer.exec(fillLog);
  const size = fs.statSync(file).size;
  await new Promise((r) => setTimeout(r, 900));
  assert.equal(fs.statSync(file).size, size, 'no thread started after stop()');
  writer.close();
});

test("a server's database (backgroundCheckpoints): its thread checkpoints, and closing ends the thread and removes the log", async () => {
  const dataDir = path.join(work, 'server');
  const database = await openDatabase({ dataDir, backgroundCheckpoints: true });
  const file = sqliteFile(dataDir);
  assert.equal(database.checkpoints, 'thread');
  await sql.raw('create table t (id integer primary key, v blob)').execute(database.db);
  await sql.raw(fillLog).execute(database.db);
  await until('the database file holds the log', () => fs.statSync(file).size >= PAGES * (PAGE - 200));
  await database.close();
  assert.equal(fs.existsSync(`${file}-wal`), false);
  // Without the option, the writer checkpoints as SQLite does by default.
  const plain = await openDatabase({ dataDir: path.join(work, 'plain') });
  assert.equal(plain.checkpoints, 'writer');
  await plain.close();
});

test("a destroyed secret's pages: the flush asks again while another connection is checkpointing, and the log ends empty", async () => {
  const { database, file } = await withFullLog('flush');
  // Another process's checkpoint in progress: it holds the checkpoint lock while it waits for a
  // writer (a transaction held here) to finish; a checkpoint asked meanwhile is busy at once.
  const holder = new Sqlite(file);
  holder.prepare('begin immediate').run();
  const binding = createRequire(import.meta.url).resolve('better-sqlite3');
  const other = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const db = new (require(workerData.binding))(workerData.file);
     db.pragma('busy_timeout = 5000');
     parentPort.postMessage('checkpointing');
     const [result] = db.pragma('wal_checkpoint(FULL)');
     db.close();
     parentPort.postMessage(result);`,
    { eval: true, workerData: { binding, file } },
  );
  const results: unknown[] = [];
  other.on('message', (m) => results.push(m));
  const exited = new Promise((r) => other.once('exit', r));
  await until('the other checkpoint started', () => results.length === 1);
  await new Promise((r) => setTimeout(r, 250));
  // Busy at once, as asked right now.
  const [busy] = (await sql<{ busy: number }>`pragma wal_checkpoint(PASSIVE)`.execute(database.db)).rows;
  assert.equal(busy?.busy, 1);
  setTimeout(() => holder.prepare('commit').run(), 200);
  await secretStore.flushDeletedPages(database.db, 'sqlite');
  await exited;
  assert.equal((results[1] as { busy: number }).busy, 0);
  assert.equal(fs.statSync(`${file}-wal`).size, 0);
  holder.close();
  await database.close();
});

test("a destroyed secret's pages: a reader still on the log is not outwaited; the flush gives up after one wait", async () => {
  const { database, file } = await withFullLog('reader');
  // A reader in a transaction holds a snapshot older than the log's last frames.
  const reader = new Sqlite(file);
  reader.prepare('begin').run();
  reader.prepare('select count(*) from t').get();
  await sql.raw(fillLog).execute(database.db);
  // The writer's wait for readers (5 s in service), shortened: in a transaction, it runs on the writer.
  await database.db.transaction().execute((trx) => sql.raw('pragma busy_timeout = 100').execute(trx));
  const started = performance.now();
  await assert.rejects(secretStore.flushDeletedPages(database.db, 'sqlite'), /busy \(attempt 1\)/);
  assert.ok(performance.now() - started < 1000);
  reader.prepare('commit').run();
  reader.close();
  await secretStore.flushDeletedPages(database.db, 'sqlite');
  assert.equal(fs.statSync(`${file}-wal`).size, 0);
  await database.close();
});
