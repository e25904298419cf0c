import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { TestApp } from '../helpers/harness.js';
import { dumpAllRows } from '../helpers/db.js';

/** Something that must (or must not) be found, in each of the forms it could be stored in. */
export interface Needle {
  label: string;
  forms: Buffer[];
}

export function needle(label: string, bytes: Buffer): Needle {
  return { label, forms: [bytes, Buffer.from(bytes.toString('base64')), Buffer.from(bytes.toString('base64url')), Buffer.from(bytes.toString('hex'))] };
}

export interface Haystack {
  name: string;
  bytes: Buffer;
}

/** The labels of needles found, each with where. */
export function findNeedles(haystacks: Haystack[], needles: Needle[]): string[] {
  const found: string[] = [];
  for (const n of needles) {
    for (const h of haystacks) {
      if (n.forms.some((f) => h.bytes.includes(f))) found.push(`${n.label} in ${h.name}`);
    }
  }
  return found;
}

/**
 * The bytes the database keeps. SQLite: every file of the data directory (database, WAL,
 * shared memory). PostgreSQL: every row as the server returns it and, when this process can
 * read the server's data directory (a local test server), the files of the schema's tables,
 * indexes and TOAST tables after a checkpoint, and the whole WAL.
 *
 * The data directory is the server's `data_directory` setting. A run that starts its own
 * PostgreSQL (.ci/run, scripts/test.mjs) names it in WSP_TEST_PG_DATA_DIR: then the files must
 * be scanned, and a directory that cannot be read (or belongs to another server) fails the test
 * instead of quietly scanning rows only.
 */
export async function databaseBytes(h: TestApp): Promise<{ haystacks: Haystack[]; notes: string[] }> {
  const haystacks: Haystack[] = [{ name: 'rows', bytes: Buffer.from(await dumpAllRows(h.database)) }];
  const notes: string[] = [];
  if (h.database.engine === 'sqlite') {
    for (const f of fs.readdirSync(h.config.dataDir)) {
      const p = path.join(h.config.dataDir, f);
      if (fs.statSync(p).isFile()) haystacks.push({ name: f, bytes: fs.readFileSync(p) });
    }
    return { haystacks, notes };
  }
  const db = h.database.db;
  const required = process.env.WSP_TEST_PG_DATA_DIR;
  let dataDir: string;
  // Reading the setting needs a superuser (or pg_read_all_settings).
  const reported = await sql<{ dir: string }>`select current_setting('data_directory') as dir`.execute(db).then(
    (r) => r.rows[0]!.dir,
    () => undefined,
  );
  try {
    if (reported === undefined && !required) throw new Error('the data_directory setting is not readable');
    if (required && reported !== undefined && fs.realpathSync(required) !== fs.realpathSync(reported)) {
      throw new Error(`the server's data directory is ${reported}, not WSP_TEST_PG_DATA_DIR (${required})`);
    }
    dataDir = (required || reported)!;
    fs.accessSync(path.join(dataDir, 'pg_wal'), fs.constants.R_OK);
  } catch (err) {
    if (required) throw new Error(`WSP_TEST_PG_DATA_DIR=${required} is set, so the PostgreSQL files must be scanned, but: ${(err as Error).message}`);
    notes.push('the PostgreSQL data directory is not readable from here: rows scanned, files not');
    return { haystacks, notes };
  }
  await sql`checkpoint`.execute(db);
  const rels = await sql<{ file: string }>`
    select pg_relation_filepath(c.oid) as file from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'i')
    union all
    select pg_relation_filepath(c.reltoastrelid) from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.reltoastrelid <> 0
    union all
    select pg_relation_filepath(i.indexrelid) from pg_class c join pg_index i on i.indrelid = c.reltoastrelid
    where c.relnamespace = current_schema()::regnamespace and c.reltoastrelid <> 0`.execute(db);
  for (const { file } of rels.rows) {
    const p = path.join(dataDir, file);
    if (fs.existsSync(p)) haystacks.push({ name: file, bytes: fs.readFileSync(p) });
  }
  const walDir = path.join(dataDir, 'pg_wal');
  for (const f of fs.readdirSync(walDir)) {
    const bytes = walSegment(path.join(walDir, f));
    if (bytes) haystacks.push({ name: `pg_wal/${f}`, bytes });
  }
  return { haystacks, notes };
}

/**
 * A file listed in pg_wal, or null if it is not a file or no longer there: a checkpoint (ours,
 * or the server's for another test file) may remove a segment, or recycle it (rename it to a
 * future segment's name), between the listing and the read; either way what it held is no
 * longer part of the WAL. Any other error still fails the scan.
 */
function walSegment(p: string): Buffer | null {
  try {
    return fs.statSync(p).isFile() ? fs.readFileSync(p) : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
