import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import SqliteDatabase from 'better-sqlite3';
import type { Database } from '../db/database.js';
import { sqliteFile } from '../db/database.js';
import { repoRoot, type Config } from '../config.js';
import { runGit } from '../git/run-git.js';
import { packageVersion } from '../shared/package-root.js';
import { AdminError } from '../shared/errors.js';

const run = promisify(execFile);

/** The manifest at the root of a backup file: what wrote it and what it holds. */
export interface BackupManifest {
  format: 'wsp-backup';
  format_version: 1;
  wsp_version: string;
  engine: 'sqlite';
  created_at: string;
  /** The last migration applied to the backed-up database. */
  migration: string | null;
  installs: number;
  /** Never in a backup: restore with the same WSP_MASTER_KEY or master.key file (docs/reliability.md). */
  master_key: 'not included';
}

const MANIFEST = 'wsp-backup.json';
const COPY_ATTEMPTS = 3;

/** Where PostgreSQL operators are sent: its backup is pg_dump plus the repositories, by hand. */
const PG_PROCEDURE = 'docs/reliability.md, "Backups"';

/**
 * `wsp admin backup --to FILE` (SQLite): one tar file holding the database, every install's
 * repository and a manifest, while servers keep serving.
 *
 * Order is what makes the two agree. The database is copied first (`VACUUM INTO`: one read
 * transaction, so one consistent snapshot while writers go on). Every commit it names existed
 * before the transaction naming it committed (renders and restores make their commit first), so
 * repositories copied afterwards hold all of them; they may also hold newer commits, which the
 * snapshot does not know. Each copied repository's `main` is then moved back to the newest commit
 * on it that a render of the snapshot names: the rule of docs/spec-gaps.md (Installs), `main`
 * never names a commit the database does not have. A render the snapshot has as running is run
 * again by its job after a restore, as after a crash.
 */
export async function backupSqlite(database: Database, config: Config, to: string): Promise<Record<string, unknown>> {
  if (database.engine !== 'sqlite') {
    throw new AdminError(`wsp admin backup copies the SQLite database only; with PostgreSQL, back up with pg_dump and then the repositories, as ${PG_PROCEDURE} describes`);
  }
  const target = path.resolve(to);
  if (fs.existsSync(target)) throw new AdminError(`${target} exists: a backup never overwrites a file`);
  const staging = fs.mkdtempSync(path.join(path.dirname(target), '.wsp-backup-'));
  try {
    const dbFile = path.join(staging, path.basename(sqliteFile(staging)));
    await sql`vacuum into ${dbFile}`.execute(database.db);
    fs.chmodSync(dbFile, 0o600);
    const snapshot = readSnapshot(dbFile);
    fs.mkdirSync(path.join(staging, 'repos'), { mode: 0o700 });
    for (const [installId, commits] of snapshot.commitsByInstall) {
      await copyRepository(path.join(repoRoot(config), `${installId}.git`), path.join(staging, 'repos', `${installId}.git`), commits);
    }
    const manifest: BackupManifest = {
      format: 'wsp-backup',
      format_version: 1,
      wsp_version: packageVersion(),
      engine: 'sqlite',
      created_at: new Date().toISOString(),
      migration: snapshot.migration,
      installs: snapshot.commitsByInstall.size,
      master_key: 'not included',
    };
    fs.writeFileSync(path.join(staging, MANIFEST), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    const partial = `${target}.partial`;
    await run('tar', ['-cf', partial, '-C', staging, '.']);
    fs.chmodSync(partial, 0o600);
    fs.renameSync(partial, target);
    return { backup: target, bytes: fs.statSync(target).size, installs: manifest.installs, migration: manifest.migration, master_key: 'not included' };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The snapshot's last migration and, per install, the commits its renders name: read from the
 * copy with plain SQL (the file is not a running platform's database; no area's store applies).
 */
function readSnapshot(file: string): { migration: string | null; commitsByInstall: Map<string, Set<string>> } {
  const db = new SqliteDatabase(file, { readonly: true });
  try {
    const commitsByInstall = new Map<string, Set<string>>();
    for (const { id } of db.prepare('select id from installs').all() as { id: string }[]) commitsByInstall.set(id, new Set());
    const rows = db.prepare('select install_id, commit_sha from renders where commit_sha is not null').all() as { install_id: string; commit_sha: string }[];
    for (const r of rows) commitsByInstall.get(r.install_id)?.add(r.commit_sha);
    const last = db.prepare('select name from kysely_migration order by name desc limit 1').get() as { name: string } | undefined;
    return { migration: last?.name ?? null, commitsByInstall };
  } finally {
    db.close();
  }
}

/**
 * Copies a live repository and moves the copy's `main` back to the newest commit the snapshot
 * knows. Git writes objects and packs under temporary names and renames them, but a repack may
 * remove files while they are copied: the copy is checked (every object `main` and its reflog
 * reach is there) and made again if it is not whole.
 */
async function copyRepository(from: string, to: string, known: Set<string>): Promise<void> {
  if (!fs.existsSync(path.join(from, 'HEAD')))
    throw new AdminError(`the repository of install ${path.basename(from, '.git')} is missing from ${path.dirname(from)}; was the install deleted during the backup? Run the backup again`);
  let problem = '';
  for (let attempt = 0; attempt < COPY_ATTEMPTS; attempt++) {
    fs.rmSync(to, { recursive: true, force: true });
    try {
      // Names before objects: a ref or reflog entry is written after the objects it names, so
      // objects copied after the names hold everything those names reach, however fast renders
      // commit meanwhile (copied in one walk, `objects/` could come before a newer `main`).
      const objects = path.join(from, 'objects');
      fs.cpSync(from, to, { recursive: true, preserveTimestamps: true, filter: (src) => src !== objects && settled(src) });
      fs.cpSync(objects, path.join(to, 'objects'), { recursive: true, preserveTimestamps: true, filter: settled });
    } catch (err) {
      problem = (err as Error).message;
      continue;
    }
    await alignMain(to, known);
    const fsck = await runGit(['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { gitDir: to });
    if (fsck.code === 0) return;
    problem = fsck.stderr.trim();
  }
  throw new AdminError(`could not copy the repository ${from} whole (${problem.slice(0, 300)}); run the backup again`);
}

/**
 * Not a lock (a ref being written) nor a temporary object or pack (`tmp_obj_…`, `tmp_pack_…`,
 * ours and git's): those are renamed away while the copy walks, and are nothing yet.
 */
function settled(src: string): boolean {
  const name = path.basename(src);
  return !name.endsWith('.lock') && !name.startsWith('tmp_');
}

/** `main` at the newest commit on it that `known` holds, or no `main` if it holds none. */
export async function alignMain(gitDir: string, known: Set<string>): Promise<void> {
  const list = await runGit(['rev-list', 'refs/heads/main'], { gitDir });
  const chain = list.code === 0 ? list.stdout.toString().split('\n').filter(Boolean) : [];
  if (chain.length === 0) return;
  const head = chain.find((sha) => known.has(sha));
  if (head === chain[0]) return;
  const args = head ? ['update-ref', 'refs/heads/main', head] : ['update-ref', '-d', 'refs/heads/main'];
  const res = await runGit(args, { gitDir });
  if (res.code !== 0) throw new AdminError(`could not set main in the copy of ${gitDir}: ${res.stderr.trim()}`);
}

/**
 * `wsp admin restore --from FILE --data-dir DIR`: a backup unpacked into a new data directory,
 * which a server then opens (with the master key the backed-up one used).
 */
export async function restoreSqlite(from: string, dataDir: string): Promise<Record<string, unknown>> {
  const file = path.resolve(from);
  const dir = path.resolve(dataDir);
  if (!fs.existsSync(file)) throw new AdminError(`${file} does not exist`);
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new AdminError(`${dir} is not empty: a backup is restored only into a new data directory`);
  const listing = (
    await run('tar', ['-tf', file], { maxBuffer: 256 * 1024 * 1024 }).catch((e: Error) => {
      throw new AdminError(`${file} is not a backup of wsp: ${e.message.split('\n')[0]}`);
    })
  ).stdout.split('\n');
  if (!listing.includes(`./${MANIFEST}`)) throw new AdminError(`${file} is not a backup of wsp (no ${MANIFEST} in it)`);
  if (listing.some((p) => p.split('/').includes('..') || p.startsWith('/'))) throw new AdminError(`${file} names paths outside its directory`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await run('tar', ['-xf', file, '-C', dir, '--no-same-owner']);
  const manifestPath = path.join(dir, MANIFEST);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as BackupManifest;
  if (manifest.format !== 'wsp-backup' || manifest.format_version !== 1) throw new AdminError(`${file} is a backup format this wsp does not read (${manifest.format} ${manifest.format_version})`);
  fs.rmSync(manifestPath);
  fs.chmodSync(dir, 0o700);
  return { data_dir: dir, installs: manifest.installs, migration: manifest.migration, created_at: manifest.created_at, wsp_version: manifest.wsp_version };
}
