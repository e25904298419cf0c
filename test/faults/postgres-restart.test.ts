import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { PatchLoad, WriteLoad } from '../helpers/write-load.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, client, masterKey } from '../reliability/servers.js';
import { LONG, reportFault } from './report.js';
import type { Schemas } from '../helpers/test-app.js';

/**
 * Issue 22, item 1: PostgreSQL restarted under write load, `pg_ctl restart -m fast` (sessions
 * ended, a clean shutdown) and then `-m immediate` (every process killed, crash recovery), on a
 * cluster of the test's own (scripts/pg-throwaway.sh). CLIENTS clients create API tokens and
 * secret versions with Idempotency-Keys, PATCH_LANES PATCH a dashboard each with If-Match and a key,
 * and one restores an install over and over (a render, the install's state and its event in one
 * transaction, then a job that lands the commit).
 * The server runs with a 2 s connection timeout and a 3 s statement timeout. Asserted:
 * - no request takes longer than BOUND_MS, 3 × (2 s + 3 s); an unanswerable request is a 503
 *   (7054) with `Retry-After: 5`;
 * - every acknowledged write is there; an unacknowledged one wholly there or wholly absent (each
 *   token and version with its event, each restore render with its install.restored event, no
 *   event without its change); retried with the same key, each has exactly one effect;
 * - jobs resume: every render (queued before, during and after the restart) succeeds, and every
 *   repository passes checkRepository (git fsck --strict, main names only committed renders).
 * SQLite is a file in the server process, nothing to restart (its outage analogue, the file
 * locked past the busy timeout, is test/reliability/database-outage.test.ts): PostgreSQL only.
 */
const CONNECT_S = 2;
const STATEMENT_S = 3;
const BOUND_MS = 3 * (CONNECT_S + STATEMENT_S) * 1000;
const CLIENTS = LONG ? 32 : 16;
const PATCH_LANES = 8;

const script = path.join(REPO_ROOT, 'scripts/pg-throwaway.sh');
const clusterDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-restart-pg-'));
let tdb: TestDatabase;
let server: ServerProcess | undefined;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

before(async () => {
  if (ENGINE !== 'postgres') return;
  process.env.WSP_TEST_PG_URL = execFileSync('bash', [script, 'start', String(await freePort()), clusterDir], { encoding: 'utf8' }).trim();
  tdb = await openTestDatabase();
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
  server = await startServer({
    ...tdb.env,
    WSP_MASTER_KEY: masterKey(),
    WSP_JOB_LEASE_SECONDS: '3',
    WSP_DB_CONNECT_TIMEOUT_SECONDS: String(CONNECT_S),
    WSP_DB_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_S),
    // Both restarts' writers create tokens in one workspace: more than the default quota of 100.
    WSP_QUOTA_API_TOKENS: '100000',
  });
});
after(async () => {
  await server?.stop('SIGKILL');
  await tdb?.cleanup().catch(() => undefined);
  if (ENGINE === 'postgres') execFileSync('bash', [script, 'stop', clusterDir]);
  fs.rmSync(clusterDir, { recursive: true, force: true });
});

type Render = Schemas['Render'];

test(
  'PostgreSQL restarted (-m fast, then -m immediate) under write load: bounded 503s, nothing lost or half-written, one effect per key, jobs resume',
  { timeout: LONG ? 600_000 : 180_000 },
  async (t: TestContext) => {
    if (ENGINE !== 'postgres') {
      t.diagnostic('SQLite is a file in the server process: there is no database server to restart (its outage analogue is test/reliability/database-outage.test.ts)');
      return;
    }
    const c = client(boot.session_token, boot.workspace_id, { retry: false });
    const url = server!.url;
    const pkg = await c.ok(url, 'POST', '/v1/packages', { name: 'restart' });
    const version = await c.ok(url, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n' } });
    const install = await c.ok(url, 'POST', '/v1/installs', { name: 'restart-restore', package_id: pkg.id, version_id: version.id, values: { who: 'first' } });
    const renders = () => c.all(url, `/v1/installs/${install.id}/renders`) as Promise<Render[]>;
    const first = await waitFor('the first render', async () => (await renders()).find((r) => r.state === 'succeeded'));
    const restoresAcked: { renderId: string; commit: string }[] = [];
    const restoreStatuses: string[] = [];

    for (const mode of ['fast', 'immediate'] as const) {
      await t.test(`pg_ctl restart -m ${mode}`, async (t) => {
        const secret = await c.ok(url, 'POST', '/v1/secrets', { name: `restart-${mode}` });
        const load = new WriteLoad(() => url, boot.session_token, boot.workspace_id, secret.id);
        load.start(CLIENTS);
        const dashboards: string[] = [];
        for (let i = 0; i < PATCH_LANES; i++) {
          dashboards.push((await c.ok(url, 'POST', '/v1/dashboards', { name: `restart-${mode}-${i}`, purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] })).id);
        }
        const patches = new PatchLoad(() => url, boot.session_token, boot.workspace_id, dashboards);
        patches.start();
        // One lane restores the install again and again: each queues a job that lands its commit.
        let restoring = true;
        let worstRestoreMs = 0;
        const restoreLane = (async () => {
          while (restoring) {
            const now = await c.call(url, 'GET', `/v1/installs/${install.id}`);
            if (now.status !== 200) {
              await new Promise((r) => setTimeout(r, 100));
              continue;
            }
            const started = performance.now();
            const res = await c.call(url, 'POST', `/v1/installs/${install.id}:restore`, { render_id: first.id }, { 'if-match': now.body.etag, 'idempotency-key': randomUUID() });
            worstRestoreMs = Math.max(worstRestoreMs, performance.now() - started);
            const code = res.body?.errors?.[0]?.code;
            restoreStatuses.push(res.status === 200 ? '200' : `${res.status} (${code})`);
            if (res.status === 200) restoresAcked.push({ renderId: res.body.render.id, commit: res.body.render.commit_sha });
            else assert.ok((res.status === 409 && code === 7030) || (res.status === 503 && code === 7054), `restore: ${res.status} ${res.text}`);
          }
        })();
        await waitFor('the load to get going', () => load.acked.length >= CLIENTS && patches.acked.length >= 2 * PATCH_LANES, { timeoutMs: 60_000, intervalMs: 20 });

        const started = performance.now();
        execFileSync('bash', [script, 'restart', mode, clusterDir]);
        const restartedAt = performance.now();
        await waitFor('the server to answer again', async () => (await api(url, 'GET', '/v1/api_tokens?limit=1', { credential: boot.api_token, retry: false })).status === 200, {
          timeoutMs: 60_000,
          intervalMs: 50,
        });
        const recoveryMs = performance.now() - restartedAt;
        const ackedBefore = load.acked.length;
        const patchedBefore = patches.acked.length;
        await waitFor('writes acknowledged after the restart', () => load.acked.length >= ackedBefore + CLIENTS && patches.acked.length >= patchedBefore + PATCH_LANES, {
          timeoutMs: 60_000,
          intervalMs: 20,
        });
        restoring = false;
        await Promise.all([load.stop(), patches.stop(), restoreLane]);

        assert.equal(server!.child.exitCode, null, 'the server is still running');
        assert.deepEqual(load.unexpected, [], 'answers the load did not expect');
        assert.deepEqual(patches.unexpected, [], 'PATCH answers the load did not expect');
        assert.deepEqual([...load.badUnavailable, ...patches.badUnavailable], [], '503 answers without code 7054 or Retry-After: 5');
        const worst = Math.max(load.tally.worstMs, patches.tally.worstMs, worstRestoreMs);
        assert.ok(worst <= BOUND_MS, `the slowest request took ${Math.round(worst)} ms, over the ${BOUND_MS} ms bound`);
        const summary = load.tally.summary();
        const unacked = load.unacked.length;
        const retries = await load.retryUnacked();
        const { lost: writesLost } = await load.check(tdb.database.db);
        const patchesUnacked = patches.unacked.length;
        await patches.retryUnacked();
        const { lost: patchesLost, effects } = await patches.check(tdb.database.db);
        const lost = writesLost + patchesLost;
        assert.equal(lost, 0);
        const refused = patches.unacked.filter((p) => p.refused).length;
        t.diagnostic(
          `restart -m ${mode}: pg_ctl took ${Math.round(restartedAt - started)} ms; ${summary}; ${unacked} unacknowledged, ${retries} retries with the same key, one effect each; PATCHes ${patches.tally.summary()}, ${patchesUnacked} unacknowledged (retried: ${refused} refused 7030 as never applied, ${patches.unacked.filter((p) => p.answerLost).length} answered 7055), ${effects} revisions, each with its event`,
        );
        reportFault(t, {
          fault: `PostgreSQL restart -m ${mode}`,
          injected: `pg_ctl restart -m ${mode} under ${CLIENTS} writers, ${PATCH_LANES} If-Match PATCH lanes and a restore lane`,
          requests: load.tally.requests + patches.tally.requests,
          acknowledged: load.tally.acknowledged + patches.tally.acknowledged,
          lost,
          worstLatencyMs: worst,
          recoveryMs,
          notes: `${summary}; ${unacked} retried with the same key: one effect each; bound ${BOUND_MS} ms`,
        });
      });
    }

    // Jobs resume: every render finishes, the acknowledged restores are on main, each restore
    // render has its one event and the repository is whole.
    const settled = await waitFor(
      'every render to finish',
      async () => {
        const all = await renders();
        return all.every((r) => ['succeeded', 'superseded', 'failed'].includes(r.state)) ? all : null;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    assert.deepEqual(
      settled.filter((r) => r.state === 'failed'),
      [],
      'no render failed',
    );
    const byId = new Map(settled.map((r) => [r.id, r]));
    const lostRestores = restoresAcked.filter((r) => byId.get(r.renderId)?.commit_sha !== r.commit || byId.get(r.renderId)?.state !== 'succeeded');
    assert.deepEqual(lostRestores, [], 'acknowledged restores');
    const commits = checkRepository(path.join(tdb.dataDir, 'repos', `${install.id}.git`), settled);
    const db = tdb.database.db;
    const restoreEvents = (await db.selectFrom('events').select('data').where('type', '=', 'install.restored').execute()).map((e) => (JSON.parse(e.data) as { render_id: string }).render_id);
    assert.deepEqual(
      restoreEvents.sort(),
      settled
        .filter((r) => r.restored_from_render_id !== null)
        .map((r) => r.id)
        .sort(),
      'install.restored: one per restore render, none without its render',
    );
    // A render is marked done inside its job; the job itself is marked finished just after, in a transaction of its own.
    const jobs = await waitFor(
      'every render job to finish',
      async () => {
        const rows = await db.selectFrom('jobs').select(['kind', 'state']).where('kind', 'like', 'render.%').execute();
        return rows.every((j) => j.state !== 'queued' && j.state !== 'running') ? rows : null;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.deepEqual(
      jobs.filter((j) => j.state !== 'succeeded'),
      [],
      'every render job succeeded',
    );
    const counts = new Map<string, number>();
    for (const s of restoreStatuses) counts.set(s, (counts.get(s) ?? 0) + 1);
    t.diagnostic(
      `restores: ${[...counts].map(([k, n]) => `${k}×${n}`).join(' ')}; ${restoresAcked.length} acknowledged, all on main; ${settled.length} renders, ${jobs.length} render jobs, all succeeded; ${commits} commits on main, fsck clean`,
    );
  },
);
