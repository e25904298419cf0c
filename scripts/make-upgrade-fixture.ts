// Regenerates test/fixtures/upgrade (issue 22, item 7): a server of the previous release
// (test/faults/previous-release.ts) writes the data set of test/faults/upgrade-data.ts on SQLite
// and on PostgreSQL, and what it left behind is stored, with a manifest of what to read back.
//
//   WSP_TEST_PG_URL=postgres://postgres@127.0.0.1:5433/wsp_test node --import tsx scripts/make-upgrade-fixture.ts
//
// It uses a schema of its own in that database (wsp_upgrade_fixture, dropped at the end) and
// pg_dump, which must be on PATH. Run it again only when the previous release moves on.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { REPO_ROOT } from './repo-root.js';
import pg from 'pg';
import { PREVIOUS_RELEASE, PREVIOUS_RELEASE_SOURCES, previousReleaseBin } from '../test/faults/previous-release.js';
import { writeDataSet, type UpgradeManifest } from '../test/faults/upgrade-data.js';
import { adminOf, FIXTURE_DIR, FIXTURE_SCHEMA, serveWith, withSearchPath } from '../test/faults/upgrade-fixture.js';
import { ProviderStub } from '../test/compute/provider-stub.js';

const pgUrl = process.env.WSP_TEST_PG_URL;
if (!pgUrl) throw new Error('WSP_TEST_PG_URL must name a PostgreSQL database the fixture may use a schema of');
const PROVIDER_TOKEN = 'upgrade-fixture-provider';

async function make(engine: 'sqlite' | 'postgres', bin: string, masterKey: string): Promise<UpgradeManifest> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `wsp-fixture-${engine}-`));
  const stub = new ProviderStub([PROVIDER_TOKEN]);
  await stub.start();
  const admin = new pg.Client({ connectionString: pgUrl });
  const db: Record<string, string> = { WSP_DATA_DIR: dataDir };
  if (engine === 'postgres') {
    await admin.connect();
    await admin.query(`drop schema if exists ${FIXTURE_SCHEMA} cascade; create schema ${FIXTURE_SCHEMA}`);
    db.DATABASE_URL = withSearchPath(pgUrl!, FIXTURE_SCHEMA);
  }
  const env = {
    ...db,
    WSP_MASTER_KEY: masterKey,
    WSP_PROVIDER_URL: stub.url,
    WSP_PROVIDER_TOKEN: PROVIDER_TOKEN,
    WSP_SCHEDULER_INTERVAL_SECONDS: '1',
    WSP_SUSPENSION_RETENTION_DAYS: '1',
    WSP_WEBHOOKS_ALLOW_HTTP: 'true',
    WSP_WEBHOOKS_ALLOW_PRIVATE: 'true',
  };
  try {
    const boot = adminOf(bin, ['bootstrap'], env);
    const adminUser = adminOf(bin, ['user', 'create', '--name', 'fixture admin'], env);
    execFileSync(process.execPath, [bin, 'admin', 'member', 'add', '--workspace', boot.workspace_id!, '--user', adminUser.user_id!, '--role', 'admin'], {
      env: { PATH: process.env.PATH, ...env },
      stdio: 'ignore',
    });
    const server = await serveWith(bin, env);
    let data;
    try {
      data = await writeDataSet(server.url, { session: boot.session_token!, userId: boot.user_id!, adminUserId: adminUser.user_id!, workspaceId: boot.workspace_id! });
    } finally {
      await server.stop();
    }
    if (engine === 'sqlite') {
      execFileSync('tar', ['-czf', path.join(FIXTURE_DIR, 'sqlite-data.tar.gz'), '-C', dataDir, 'wsp.sqlite', 'repos']);
    } else {
      const dump = execFileSync('pg_dump', ['--no-owner', '--no-privileges', '--inserts', '--schema', FIXTURE_SCHEMA, pgUrl!], { maxBuffer: 256 * 1024 * 1024 });
      // pg_dump's `\restrict` lines are psql meta-commands: the test loads the dump with a plain client.
      const plain = dump
        .toString('utf8')
        .split('\n')
        .filter((l) => !l.startsWith('\\'))
        .join('\n');
      fs.writeFileSync(path.join(FIXTURE_DIR, 'postgres.sql.gz'), zlib.gzipSync(plain, { level: 9 }));
      execFileSync('tar', ['-czf', path.join(FIXTURE_DIR, 'postgres-repos.tar.gz'), '-C', dataDir, 'repos']);
    }
    return { commit: PREVIOUS_RELEASE.commit, engine, madeAt: new Date().toISOString(), ...data };
  } finally {
    if (engine === 'postgres') {
      await admin.query(`drop schema if exists ${FIXTURE_SCHEMA} cascade`);
      await admin.end();
    }
    await stub.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

fs.mkdirSync(FIXTURE_DIR, { recursive: true });
// The release's sources, for tests in a clone without its commit (test/faults/previous-release.ts).
const sources = execFileSync('git', ['-C', REPO_ROOT, 'archive', '--format=tar', PREVIOUS_RELEASE.commit, 'src', 'bin', 'scripts', 'package.json', 'LICENSE'], { maxBuffer: 256 * 1024 * 1024 });
fs.writeFileSync(PREVIOUS_RELEASE_SOURCES, zlib.gzipSync(sources, { level: 9 }));
const bin = await previousReleaseBin();
const masterKey = randomBytes(32).toString('base64');
fs.writeFileSync(path.join(FIXTURE_DIR, 'master.key'), masterKey + '\n');
const sqlite = await make('sqlite', bin, masterKey);
const postgres = await make('postgres', bin, masterKey);
fs.writeFileSync(path.join(FIXTURE_DIR, 'manifest.json'), JSON.stringify({ commit: PREVIOUS_RELEASE.commit, sqlite, postgres }, null, 1) + '\n');
for (const f of fs.readdirSync(FIXTURE_DIR)) console.log(`${f}: ${fs.statSync(path.join(FIXTURE_DIR, f)).size} bytes`);
