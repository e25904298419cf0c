import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { fillDisk, freeBytes, mountSkip, mountTmpfs, unmountAndRemove } from '../helpers/mounts.js';
import { waitFor } from '../helpers/wait.js';
import { migrate, openDatabase } from '../../src/db/database.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, client, git, masterKey } from '../reliability/servers.js';
import { LoadTally, LONG, reportFault } from './report.js';
import type { Schemas } from '../helpers/test-app.js';

/**
 * Issue 22, item 3: a full disk, for real. A tmpfs of a few megabytes is the server's disk: on
 * SQLite the data directory (the database and the repositories), on PostgreSQL the repository
 * directory (WSP_REPO_DIR; the database is elsewhere). A file written until ENOSPC fills it while
 * `wsp serve` runs; then every kind of write is made, round after round:
 * - a write answers 2xx or 507 (7057), never another status, and the server stays up;
 * - a restore (its commit is written in the request) answers 507 while the repositories' disk is
 *   full; a render queued meanwhile waits and says so (`message`);
 * - reads answer 200 throughout; on PostgreSQL the database's writes keep working;
 * - while full and after: `PRAGMA integrity_check` is ok, every repository passes checkRepository
 *   (`git fsck --strict` and the renders' rule, test/reliability/servers.ts);
 * - once the filler is deleted, with no restart: writes succeed, the waiting renders and a
 *   restore complete, and every acknowledged write is there.
 */
const skip = mountSkip();
const ROUNDS = LONG ? 300 : 25;
const INSTALLS = 2;
/** A large payload fills what the database has left quickly (65,536 bytes is the most one takes). */
const PAYLOAD = Buffer.alloc(48 * 1024, 7).toString('base64');

let disk: string | undefined;
let tdb: TestDatabase | undefined;
let server: ServerProcess | undefined;
let env: Record<string, string>;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };

before(async () => {
  if (skip) return;
  if (ENGINE === 'sqlite') {
    disk = mountTmpfs('wsp-full-disk-', 24);
    const database = await openDatabase({ dataDir: disk });
    try {
      await migrate(database);
      boot = await createAdminService(database.db, systemClock).bootstrap();
    } finally {
      await database.close();
    }
    env = { WSP_DATA_DIR: disk };
  } else {
    disk = mountTmpfs('wsp-full-repos-', 8);
    tdb = await openTestDatabase();
    boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
    env = { ...tdb.env, WSP_REPO_DIR: disk };
  }
  // A short lease: a job whose state the full database could not record is taken again soon.
  // 300 rounds (npm run faults) create more tokens than the default quota of 100 where the database is not on the full disk.
  env = { ...env, WSP_MASTER_KEY: masterKey(), WSP_JOB_LEASE_SECONDS: '3', WSP_QUOTA_API_TOKENS: '100000' };
  registerSecret(boot.session_token, boot.api_token);
});

after(async () => {
  await server?.stop('SIGKILL');
  if (disk) unmountAndRemove(disk);
  await tdb?.cleanup();
});

type Render = Schemas['Render'];

function integrityCheck(dataDir: string): string {
  const db = new SqliteDatabase(path.join(dataDir, 'wsp.sqlite'), { readonly: true });
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

test(
  `a full disk (${ENGINE === 'sqlite' ? 'the data directory' : 'the repository directory'} on a tmpfs): writes answer 507 (7057), reads work, nothing is corrupt, all works again once space is freed`,
  { skip, timeout: LONG ? 600_000 : 120_000 },
  async (t: TestContext) => {
    server = await startServer(env);
    const url = server.url;
    const c = client(boot.session_token, boot.workspace_id, { retry: false });
    const repoRoot = ENGINE === 'sqlite' ? path.join(disk!, 'repos') : disk!;
    const repos = () => fs.readdirSync(repoRoot).filter((n) => n.endsWith('.git'));

    const pkg = await c.ok(url, 'POST', '/v1/packages', { name: 'full' });
    // A file of some size: a render needs room for its blob.
    const version = await c.ok(url, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n', 'padding.txt': `{{who}}\n${'p'.repeat(20_000)}\n` } });
    const installs: { id: string }[] = [];
    for (let i = 0; i < INSTALLS; i++) installs.push(await c.ok(url, 'POST', '/v1/installs', { name: `full-${i}`, package_id: pkg.id, version_id: version.id, values: { who: 'before' } }));
    const renders = async (installId: string): Promise<Render[]> => c.all(url, `/v1/installs/${installId}/renders`);
    const firsts = await Promise.all(installs.map((inst) => waitFor('the first render', async () => ((await renders(inst.id))[0]?.state === 'succeeded' ? (await renders(inst.id))[0]! : null))));
    const secret = await c.ok(url, 'POST', '/v1/secrets', { name: 'full' });
    const acked = { versions: [] as string[], tokens: [] as string[], dashboards: [] as string[], patches: new Map<string, string>() };
    acked.versions.push((await c.ok(url, 'POST', `/v1/secrets/${secret.id}/versions`, { data: PAYLOAD })).id);

    const filler = fillDisk(disk!);
    t.diagnostic(`filled: ${fs.statSync(filler).size} bytes of filler, ${freeBytes(disk!)} bytes free`);
    const tally = new LoadTally();
    const unexpected: string[] = [];
    let refused = 0;
    /** One write: 2xx (returned) or 507 7057 (null); anything else is recorded and fails the test. */
    const write = async (what: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
      const started = performance.now();
      const res = await c.call(url, method, route, body, headers);
      const code = res.body?.errors?.[0]?.code as number | undefined;
      tally.record(res.status, performance.now() - started, code);
      if (res.status >= 200 && res.status < 300) return res.body ?? {};
      if (res.status === 507 && code === 7057) {
        refused++;
        return null;
      }
      unexpected.push(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
      return null;
    };
    const read = async (what: string, route: string) => {
      const started = performance.now();
      const res = await c.call(url, 'GET', route);
      tally.record(res.status, performance.now() - started, res.body?.errors?.[0]?.code);
      if (res.status !== 200) unexpected.push(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
    };

    for (let round = 0; round < ROUNDS && unexpected.length === 0; round++) {
      const v = await write('secret version', 'POST', `/v1/secrets/${secret.id}/versions`, { data: PAYLOAD, comment: `round ${round}` });
      if (v) acked.versions.push(v.id);
      const token = await write('api token', 'POST', '/v1/api_tokens', { name: `full-${round}` });
      if (token) acked.tokens.push(token.id);
      const dashboard = await write('dashboard', 'POST', '/v1/dashboards', { name: `full ${round}`, purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] });
      if (dashboard) acked.dashboards.push(dashboard.id);
      const inst = installs[round % INSTALLS]!;
      const who = `during-${round}`;
      if (await write('install PATCH', 'PATCH', `/v1/installs/${inst.id}`, { values: { who } }, { 'if-match': '*' })) acked.patches.set(inst.id, who);
      const now = await c.call(url, 'GET', `/v1/installs/${installs[0]!.id}`);
      if (now.status !== 200) unexpected.push(`install read: ${now.status}`);
      else {
        const restore = await write('restore', 'POST', `/v1/installs/${installs[0]!.id}:restore`, { render_id: firsts[0]!.id }, { 'if-match': now.body.etag, 'idempotency-key': randomUUID() });
        if (restore) unexpected.push('a restore was acknowledged: its commit cannot have been written on a full disk');
      }
      await read('secret versions', `/v1/secrets/${secret.id}/versions?limit=5`);
      await read('installs', '/v1/installs');
      await read('a render', `/v1/renders/${firsts[1]!.id}`);
      await read('dashboards', '/v1/dashboards?limit=5');
    }
    if (unexpected.length > 0) for (const line of server.output.filter((l) => /"level":(50|40)/.test(l)).slice(0, 6)) t.diagnostic(line.slice(0, 1500));
    assert.deepEqual(unexpected, [], 'every write answers 2xx or 507 (7057), every read 200');
    // SQLite: the server's checkpoint thread fails every checkpoint while the disk is full; it says so once.
    assert.ok(server.output.filter((l) => l.includes('[WSP_WAL_CHECKPOINT]')).length <= 1, server.output.filter((l) => l.includes('[WSP_WAL_CHECKPOINT]')).join('\n'));
    assert.ok(refused > 0, `the full disk refused no write (${tally.summary()})`);
    assert.equal(server.child.exitCode, null, 'the server is still running');
    if (ENGINE === 'postgres') {
      assert.equal(acked.versions.length, ROUNDS + 1, 'the database is not on the full disk: its writes keep working');
      // A render queued while the repositories' disk is full says what it waits for.
      const waiting = installs[0]!;
      await waitFor(
        'a render waiting for the full repository volume',
        async () => {
          const [latest] = await renders(waiting.id);
          return latest && /^Waiting: The repository volume is full/.test(latest.message ?? '');
        },
        { detail: async () => JSON.stringify((await renders(waiting.id))[0]) },
      );
    }
    const ready = await c.call(url, 'GET', '/readyz');
    assert.equal(ready.status, 503, ready.text);
    assert.ok(
      ready.body.errors.some((e: { code: number; metadata?: Record<string, string> }) => e.code === 7058 && e.metadata?.problem === 'full'),
      ready.text,
    );
    // Nothing corrupt while the disk is still full.
    if (ENGINE === 'sqlite') assert.equal(integrityCheck(disk!), 'ok');
    for (const repo of repos()) checkRepository(path.join(repoRoot, repo), await renders(repo.replace(/\.git$/, '')));

    fs.rmSync(filler);
    const freed = performance.now();
    // Recovered: the restore the full disk refused (it writes both the database and a repository), made again.
    const restored = await waitFor(
      'a restore to succeed again',
      async () => {
        const now = await c.ok(url, 'GET', `/v1/installs/${installs[0]!.id}`);
        const res = await c.call(url, 'POST', `/v1/installs/${installs[0]!.id}:restore`, { render_id: firsts[0]!.id }, { 'if-match': now.etag, 'idempotency-key': randomUUID() });
        assert.ok(res.status === 200 || res.status === 507, res.text);
        return res.status === 200 ? res.body : null;
      },
      { intervalMs: 50 },
    );
    const recoveryMs = performance.now() - freed;
    const after = await c.call(url, 'POST', `/v1/secrets/${secret.id}/versions`, { data: PAYLOAD });
    assert.equal(after.status, 201, after.text);
    acked.versions.push(after.body.id);
    await waitFor('the restore to complete', async () => {
      const op = await c.ok(url, 'GET', `/v1/operations/${restored.render.operation_id}`);
      if (op.done) assert.equal(op.error, null, JSON.stringify(op));
      return op.done;
    });
    // Every render comes to an end, and none failed: those that waited for space were retried.
    for (const inst of installs) {
      const all = await waitFor(
        'every render to finish',
        async () => {
          const list = await renders(inst.id);
          return list.every((r) => r.state !== 'queued' && r.state !== 'running') ? list : null;
        },
        { timeoutMs: 90_000, detail: async () => JSON.stringify((await renders(inst.id)).slice(0, 3)) },
      );
      assert.deepEqual(
        all.filter((r) => r.state === 'failed'),
        [],
        'no render failed',
      );
      const current = await c.ok(url, 'GET', `/v1/installs/${inst.id}`);
      assert.equal(current.last_render.state, 'succeeded', JSON.stringify(current));
    }
    // The last values acknowledged are what the branch holds (the restore moved the first install back).
    const last = installs[1]!.id;
    assert.equal(git(path.join(repoRoot, `${last}.git`), 'show', 'main:hello.txt'), `Hello ${acked.patches.get(last) ?? 'before'}`);
    // Nothing acknowledged is lost.
    const versions = new Set((await c.all(url, `/v1/secrets/${secret.id}/versions`)).map((v: { id: string }) => v.id));
    const tokens = new Set((await c.all(url, '/v1/api_tokens')).map((v: { id: string }) => v.id));
    const dashboards = new Set((await c.all(url, '/v1/dashboards')).map((v: { id: string }) => v.id));
    const lost = acked.versions.filter((id) => !versions.has(id)).length + acked.tokens.filter((id) => !tokens.has(id)).length + acked.dashboards.filter((id) => !dashboards.has(id)).length;
    assert.equal(lost, 0, 'every acknowledged write is there');
    assert.equal((await c.call(url, 'GET', '/readyz')).status, 200);
    if (ENGINE === 'sqlite') assert.equal(integrityCheck(disk!), 'ok');
    for (const repo of repos()) checkRepository(path.join(repoRoot, repo), await renders(repo.replace(/\.git$/, '')));
    assert.equal(server.child.exitCode, null, 'no restart: the same process throughout');

    reportFault(t, {
      fault: ENGINE === 'sqlite' ? 'full disk (database and repositories)' : 'full disk (repositories)',
      injected: `tmpfs of ${ENGINE === 'sqlite' ? 24 : 8} MB filled to ENOSPC by a file, ${ROUNDS} rounds of 5 writes and 4 reads`,
      requests: tally.requests,
      acknowledged: tally.acknowledged,
      lost,
      worstLatencyMs: tally.worstMs,
      recoveryMs,
      notes: tally.summary(),
    });
  },
);
