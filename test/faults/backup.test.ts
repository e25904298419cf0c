import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { runWsp, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, client, git, masterKey, repositories } from '../reliability/servers.js';
import { LONG, LoadTally, reportFault } from './report.js';

/**
 * Issue 22, item 6: `wsp admin backup --to FILE` while clients write (secret versions, dashboards,
 * install PATCHes whose renders commit to the repositories), then `wsp admin restore --from FILE
 * --data-dir NEW` and a server on NEW with the same master key (which the backup does not hold):
 * - every write acknowledged before the backup began is there: versions decrypt to what was
 *   sent, dashboards read back, each install's values are those of its last acknowledged PATCH
 *   or a later one;
 * - every repository passes `git fsck --strict` and matches its renders (checkRepository), once
 *   the renders the backup caught running have run again;
 * - the backup holds no master key.
 * On PostgreSQL the command refuses and names the documented procedure (pg_dump, then the
 * repositories: docs/reliability.md, "Backups"), and the test runs that procedure, its restore
 * script read from the document itself, under the same writes and checks.
 */
const WRITERS = 8;
const INSTALLS = 3;
/** How long the clients write before the backup starts. */
const WARMUP_MS = LONG ? 15_000 : 1_500;

let tdb: TestDatabase;
let env: Record<string, string>;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };
const processes: ServerProcess[] = [];
/** Databases a restore made, dropped at the end. */
const dropAfter: string[] = [];
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-backup-'));

before(async () => {
  tdb = await openTestDatabase();
  // A short job lease: a render the backup caught running is run again by the restored server once
  // the lease its first server took has run out (60 s by default, which was most of this file's time).
  env = { ...tdb.env, WSP_MASTER_KEY: masterKey(), WSP_QUOTA_RENDERS_PER_HOUR: '1000000', WSP_JOB_LEASE_SECONDS: '5' };
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
});
after(async () => {
  for (const p of processes) await p.stop('SIGKILL');
  fs.rmSync(scratch, { recursive: true, force: true });
  await tdb.cleanup();
  if (dropAfter.length > 0) {
    const admin = new pg.Client({ connectionString: process.env.WSP_TEST_PG_URL });
    await admin.connect();
    for (const name of dropAfter) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
});

/** How a backup is made while the clients write, and brought back. */
interface Procedure {
  /** The fault table's words for it. */
  injected: string;
  /** What the backup holds, for the report. */
  what: string;
  /** Runs while the clients write. */
  backup(): Promise<{ bytes: number }>;
  /** Brings the backup back: the restored server's environment (the master key apart) and data directory. */
  restore(): Promise<{ env: Record<string, string>; dataDir: string }>;
}

/**
 * Clients write (secret versions, dashboards, install PATCHes that render) while `procedure`
 * backs up; then it restores, a server starts on what it restored with the same master key, and
 * every write acknowledged before the backup began must be there, with the repositories whole
 * and matching their renders.
 */
async function backupUnderWrites(t: TestContext, procedure: Procedure): Promise<void> {
  const server = await startServer(env);
  processes.push(server);
  const c = client(boot.session_token, boot.workspace_id, { retry: false });
  const url = server.url;
  const pkg = await c.ok(url, 'POST', '/v1/packages', { name: 'backup' });
  const version = await c.ok(url, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n' } });
  const installs: { id: string }[] = [];
  for (let i = 0; i < INSTALLS; i++) installs.push(await c.ok(url, 'POST', '/v1/installs', { name: `bk-${i}`, package_id: pkg.id, version_id: version.id, values: { who: 'w0' } }));
  const secret = await c.ok(url, 'POST', '/v1/secrets', { name: 'bk' });

  const tally = new LoadTally();
  /** Each acknowledged write, with when its answer came. */
  const versions: { id: string; data: string; at: number }[] = [];
  const dashboards: { id: string; name: string; at: number }[] = [];
  const patches: { install: number; n: number; at: number }[] = [];
  const unexpected: string[] = [];
  let stop = false;
  let n = 0;
  const timed = async (method: string, p: string, body: unknown, want: number, headers: Record<string, string> = {}) => {
    const start = Date.now();
    const res = await c.call(url, method, p, body, headers);
    tally.record(res.status, Date.now() - start, res.body?.errors?.[0]?.code);
    if (res.status !== want) unexpected.push(`${method} ${p}: ${res.status} ${res.text.slice(0, 200)}`);
    return res.status === want ? res : null;
  };
  const lane = async (step: () => Promise<boolean>) => {
    while (!stop) if (!(await step())) return;
  };
  const lanes: Promise<void>[] = [];
  for (let i = 0; i < WRITERS; i++) {
    if (i % 3 === 0) {
      lanes.push(
        lane(async () => {
          const data = randomBytes(16).toString('base64');
          const res = await timed('POST', `/v1/secrets/${secret.id}/versions`, { data }, 201);
          if (res) versions.push({ id: res.body.id, data, at: Date.now() });
          return res !== null;
        }),
      );
    } else if (i % 3 === 1) {
      lanes.push(
        lane(async () => {
          const name = `bk-${++n}`;
          const res = await timed('POST', '/v1/dashboards', { name, purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] }, 201);
          if (res) dashboards.push({ id: res.body.id, name, at: Date.now() });
          return res !== null;
        }),
      );
    } else {
      // One lane per install (lanes 2 and 5 patch installs 0 and 1): the last PATCH a lane had
      // acknowledged is then the install's value or an older one's successor, never overtaken by
      // another lane's slower request (i % INSTALLS put both lanes on install 2, which made that
      // check wrong under load).
      const k = Math.floor(i / 3) % INSTALLS;
      lanes.push(
        lane(async () => {
          const m = ++n;
          const res = await timed('PATCH', `/v1/installs/${installs[k]!.id}`, { values: { who: `w${m}` } }, 200, { 'if-match': '*' });
          if (res) patches.push({ install: k, n: m, at: Date.now() });
          return res !== null;
        }),
      );
    }
  }
  const loadStart = Date.now();
  await waitFor('the clients to write a while', () => Date.now() - loadStart > WARMUP_MS && versions.length >= 10 && dashboards.length >= 10 && patches.length >= 10, { intervalMs: 50 });

  const backupStart = Date.now();
  let made: { bytes: number };
  let backupMs: number;
  let during: number;
  try {
    made = await procedure.backup();
    backupMs = Date.now() - backupStart;
    // Writes went on during the backup.
    during = tally.acknowledged;
    await waitFor('a write acknowledged after the backup', () => versions.some((v) => v.at > backupStart + backupMs), { intervalMs: 20 });
  } finally {
    stop = true;
    await Promise.allSettled(lanes);
  }
  assert.deepEqual(unexpected, []);
  assert.ok(during > 0);

  const restoreStart = Date.now();
  const restored = await procedure.restore();
  const again = await startServer({ ...restored.env, WSP_MASTER_KEY: env.WSP_MASTER_KEY!, WSP_QUOTA_RENDERS_PER_HOUR: '1000000', WSP_JOB_LEASE_SECONDS: env.WSP_JOB_LEASE_SECONDS! });
  processes.push(again);
  await c.ok(again.url, 'GET', '/v1/secrets');
  const recoveryMs = Date.now() - restoreStart;

  // Every write acknowledged before the backup began.
  const missing: string[] = [];
  const before = <T extends { at: number }>(list: T[]) => list.filter((w) => w.at < backupStart);
  for (const v of before(versions)) {
    const res = await c.call(again.url, 'GET', `/v1/secrets/${secret.id}/versions/${v.id}:access`);
    if (res.status !== 200 || res.body.data !== v.data) missing.push(`version ${v.id} (acknowledged ${backupStart - v.at} ms before the backup): ${res.status}`);
  }
  for (const d of before(dashboards)) {
    const res = await c.call(again.url, 'GET', `/v1/dashboards/${d.id}`);
    if (res.status !== 200 || res.body.name !== d.name) missing.push(`dashboard ${d.id} (acknowledged ${backupStart - d.at} ms before the backup): ${res.status}`);
  }
  for (const [k, inst] of installs.entries()) {
    const last = Math.max(
      0,
      ...before(patches)
        .filter((p) => p.install === k)
        .map((p) => p.n),
    );
    const now = await c.ok(again.url, 'GET', `/v1/installs/${inst.id}`);
    if (Number(String(now.values.who).slice(1)) < last) missing.push(`install ${k}: values ${now.values.who}, the last PATCH acknowledged before the backup w${last}`);
  }
  const lost = missing.length;
  // Nothing half-made: every version the restored database lists decrypts.
  for (const v of await c.all(again.url, `/v1/secrets/${secret.id}/versions`)) {
    const res = await c.call(again.url, 'GET', `/v1/secrets/${secret.id}/versions/${v.id}:access`);
    assert.equal(res.status, 200, res.text);
  }
  assert.deepEqual(missing, [], 'acknowledged writes lost');

  // The repositories agree with the restored database once the renders it caught running ran again.
  const repos = repositories(restored.dataDir);
  assert.equal(repos.length, INSTALLS);
  let commits = 0;
  for (const inst of installs) {
    const renders = await waitFor(`the renders of ${inst.id} to finish`, async () => {
      const list = await c.all(again.url, `/v1/installs/${inst.id}/renders`);
      return list.every((r: { state: string }) => r.state !== 'queued' && r.state !== 'running') ? list : null;
    });
    assert.ok(
      renders.every((r: { state: string }) => r.state === 'succeeded' || r.state === 'superseded'),
      JSON.stringify(renders.map((r: { state: string }) => r.state)),
    );
    const repo = repos.find((r) => r.endsWith(`${inst.id}.git`))!;
    commits += checkRepository(repo, renders);
    // main's tree is the install's current values.
    const now = await c.ok(again.url, 'GET', `/v1/installs/${inst.id}`);
    assert.equal(git(repo, 'show', 'refs/heads/main:hello.txt'), `Hello ${now.values.who}`);
  }
  assert.equal(await again.stop(), 0);

  reportFault(t, {
    fault: 'backup under writes, restored',
    injected: procedure.injected,
    requests: tally.requests,
    acknowledged: tally.acknowledged,
    lost,
    worstLatencyMs: tally.worstMs,
    recoveryMs,
    notes: `backup ${backupMs!} ms, ${made!.bytes} bytes (${procedure.what}); acknowledged before it began: ${before(versions).length} versions, ${before(dashboards).length} dashboards, ${before(patches).length} PATCHes, all found; ${INSTALLS} repositories, ${commits} commits on main, fsck clean, matching their renders; secrets decrypted with the same WSP_MASTER_KEY (not in the backup); recovery = restore + start + first answer; ${tally.summary()}`,
  });
}

if (ENGINE === 'postgres') {
  test('wsp admin backup on PostgreSQL refuses and names the procedure (pg_dump, then the repositories)', async () => {
    const file = path.join(scratch, 'pg.tar');
    const res = await runWsp(['admin', 'backup', '--to', file], env);
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /^error: .*pg_dump.*docs\/reliability\.md, "Backups"/);
    assert.ok(!fs.existsSync(file));
  });

  test('the documented PostgreSQL procedure (pg_dump, then the repositories) while clients write; restored into a new database, every earlier write is there', async (t: TestContext) => {
    const bin = (name: string) => path.join(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim(), name);
    const baseUrl = process.env.WSP_TEST_PG_URL!;
    const schema = tdb.database.pgSchema!;
    const dump = path.join(scratch, 'wsp.dump');
    const reposTar = path.join(scratch, 'repos.tar');
    const newDatabase = `wsp_restored_${randomBytes(4).toString('hex')}`;
    await backupUnderWrites(t, {
      injected: `pg_dump --format=custom and tar of the repositories while ${WRITERS} clients write; pg_restore into a new database, the repositories unpacked and main moved back (docs/reliability.md), a new server on them`,
      what: 'pg_dump custom format + repositories tar',
      async backup() {
        // Steps 1 and 2 of docs/reliability.md, "Backups": the database first, then the repositories.
        await run(bin('pg_dump'), ['--format=custom', `--schema=${schema}`, `--file=${dump}`, baseUrl]);
        // Step 2's script, as the document writes it: the repositories' names, then their objects.
        await run('bash', ['-euo', 'pipefail', '-c', documentedScript('copy the repositories')], { ...process.env, BACKUP: scratch, WSP_DATA_DIR: tdb.dataDir });
        return { bytes: fs.statSync(dump).size + fs.statSync(reposTar).size };
      },
      async restore() {
        const admin = new pg.Client({ connectionString: baseUrl });
        await admin.connect();
        await admin.query(`create database ${newDatabase}`);
        await admin.end();
        dropAfter.push(newDatabase);
        const newUrl = new URL(baseUrl);
        newUrl.pathname = `/${newDatabase}`;
        await run(bin('pg_restore'), [`--dbname=${newUrl}`, dump]);
        // Percent-encoded by hand: URLSearchParams writes a space as '+', which libpq (psql) does not read as one.
        newUrl.search = `?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
        const target = path.join(scratch, 'restored-pg');
        fs.mkdirSync(target);
        await run('tar', ['-xf', reposTar, '-C', target]);
        // Step 3's script, as the document writes it: main moved back to the newest commit the database names.
        await run('bash', ['-euo', 'pipefail', '-c', documentedScript("move each repository's `main` back")], { ...process.env, NEWDB: newUrl.toString(), DATA: target });
        return { env: { DATABASE_URL: newUrl.toString(), WSP_DATA_DIR: target }, dataDir: target };
      },
    });
  });
} else {
  test('wsp admin backup while clients write; restored into a new data directory, every earlier write is there', async (t: TestContext) => {
    const file = path.join(scratch, 'wsp.tar');
    await backupUnderWrites(t, {
      injected: `wsp admin backup while ${WRITERS} clients write; wsp admin restore into a new data directory, a new server on it`,
      what: 'wsp admin backup',
      async backup() {
        const backup = await runWsp(['admin', 'backup', '--to', file, '--json'], env, 120_000);
        assert.equal(backup.code, 0, backup.stderr);
        const made = JSON.parse(backup.stdout) as { backup: string; bytes: number; installs: number; migration: string };
        assert.equal(made.installs, INSTALLS);
        const listing = execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).split('\n');
        assert.ok(!listing.some((p) => /master\.key/.test(p)), 'no master key in the backup');
        assert.ok(listing.includes('./wsp.sqlite') && listing.includes('./wsp-backup.json'), listing.join(' '));
        // A file that exists is never overwritten; a data directory in use is never a target.
        assert.equal((await runWsp(['admin', 'backup', '--to', file], env)).code, 1);
        const refused = await runWsp(['admin', 'restore', '--from', file, '--data-dir', tdb.dataDir], {});
        assert.equal(refused.code, 1);
        assert.match(refused.stderr, /not empty/);
        return made;
      },
      async restore() {
        const target = path.join(scratch, 'restored');
        const restored = await runWsp(['admin', 'restore', '--from', file, '--data-dir', target, '--json'], {});
        assert.equal(restored.code, 0, restored.stderr);
        return { env: { WSP_DATA_DIR: target }, dataDir: target };
      },
    });
  });
}

const execFileAsync = promisify(execFile);

/** A command, without blocking the event loop that drives the clients. */
async function run(file: string, args: string[], runEnv: NodeJS.ProcessEnv = process.env): Promise<void> {
  await execFileAsync(file, args, { env: runEnv, maxBuffer: 16 * 1024 * 1024 });
}

/** The shell block of docs/reliability.md's PostgreSQL procedure whose text says `step`, so the test runs what the document says. */
function documentedScript(step: string): string {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/reliability.md'), 'utf8');
  const words = step.split(' ').map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const block = new RegExp(`${words.join('\\s+')}[\\s\\S]*?\`\`\`sh\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1];
  assert.ok(block, `docs/reliability.md: the shell block of the PostgreSQL step that says "${step}"`);
  return block
    .split('\n')
    .map((l) => l.replace(/^ {3}/, ''))
    .join('\n');
}
