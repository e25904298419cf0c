import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import type { UpgradeManifest } from './upgrade-data.js';

/**
 * The upgrade fixture (test/fixtures/upgrade, made by scripts/make-upgrade-fixture.ts): what a
 * server of the previous release left behind, per engine.
 * - SQLite: `sqlite-data.tar.gz`, its whole data directory (wsp.sqlite and repos/).
 * - PostgreSQL: `postgres.sql.gz` (`pg_dump --no-owner --no-privileges --inserts` of its schema,
 *   INSERTs rather than COPY so a plain client loads it, no psql needed) and
 *   `postgres-repos.tar.gz`, its data directory (repos/).
 * - `manifest.json`: per engine, what was written and must be read back; `master.key`: the key
 *   its secrets are encrypted with (given as WSP_MASTER_KEY, so no key file is involved).
 */
export const FIXTURE_DIR = path.join(REPO_ROOT, 'test/fixtures/upgrade');
/** The schema the fixture's PostgreSQL server wrote to: renamed to a fresh one when loaded. */
export const FIXTURE_SCHEMA = 'wsp_upgrade_fixture';

export interface FixtureFile {
  commit: string;
  sqlite: UpgradeManifest;
  postgres: UpgradeManifest;
}

export function readManifest(): FixtureFile {
  return JSON.parse(fs.readFileSync(path.join(FIXTURE_DIR, 'manifest.json'), 'utf8')) as FixtureFile;
}

export function fixtureMasterKey(): string {
  return fs.readFileSync(path.join(FIXTURE_DIR, 'master.key'), 'utf8').trim();
}

/** The database URL naming `schema` as the connection's search_path (how a server is given a schema of its own). */
export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

export interface LoadedFixture {
  /** DATABASE_URL (PostgreSQL) and WSP_DATA_DIR of the unpacked fixture. */
  env: Record<string, string>;
  dataDir: string;
  schema?: string;
  cleanup(): void;
}

/**
 * Unpacks the fixture of `engine` into a new data directory (and, on PostgreSQL, a new schema
 * of `pgUrl`'s database, prefixed with the test run's id so scripts/test.mjs drops it).
 */
export async function loadFixture(engine: 'sqlite' | 'postgres', pgUrl?: string): Promise<LoadedFixture> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-upgrade-'));
  const cleanup = () => fs.rmSync(dataDir, { recursive: true, force: true });
  if (engine === 'sqlite') {
    execFileSync('tar', ['-xzf', path.join(FIXTURE_DIR, 'sqlite-data.tar.gz'), '-C', dataDir]);
    return { env: { WSP_DATA_DIR: dataDir }, dataDir, cleanup };
  }
  if (!pgUrl) throw new Error('the PostgreSQL fixture needs a database URL');
  execFileSync('tar', ['-xzf', path.join(FIXTURE_DIR, 'postgres-repos.tar.gz'), '-C', dataDir]);
  const schema = `t_${process.env.WSP_TEST_RUN_ID ?? ''}up${randomBytes(5).toString('hex')}`;
  const dump = zlib.gunzipSync(fs.readFileSync(path.join(FIXTURE_DIR, 'postgres.sql.gz'))).toString('utf8');
  // The dump names its schema everywhere (CREATE SCHEMA, every table, index and constraint):
  // the name is distinctive enough to be replaced as text.
  const sqlText = dump.split(FIXTURE_SCHEMA).join(schema);
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
  return { env: { WSP_DATA_DIR: dataDir, DATABASE_URL: withSearchPath(pgUrl, schema) }, dataDir, schema, cleanup };
}

/** A `wsp serve` of any release (`bin`), for the fixture script (test/helpers/processes.ts's startServer in tests). */
export async function serveWith(bin: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess; output: string[]; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), LANG: 'C.UTF-8', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start:\n${output.join('\n')}`));
    }, 60_000);
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        output.push(line);
        const address = /"address":"([^"]+)".*"msg":"listening"/.exec(line)?.[1];
        if (address) {
          clearTimeout(timer);
          resolve(address);
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => reject(new Error(`the server exited before listening:\n${output.join('\n')}`)));
  });
  return {
    url,
    child,
    output,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs an admin command of any release with --json and returns its one JSON object. */
export function adminOf(bin: string, args: string[], env: Record<string, string>): Record<string, string> {
  const out = execFileSync(process.execPath, [bin, 'admin', ...args, '--json'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), LANG: 'C.UTF-8', ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, string>;
}
