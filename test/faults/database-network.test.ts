import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { WriteLoad } from '../helpers/write-load.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { masterKey } from '../reliability/servers.js';
import { LONG, reportFault } from './report.js';

/**
 * Issue 22, item 2: a slow or broken network between `wsp serve` and PostgreSQL. A TCP proxy of
 * the test's own (test/helpers/tcp-proxy.ts) sits between them while clients write (API tokens
 * and secret versions, each with an Idempotency-Key); it adds latency, stalls (forwards nothing,
 * closes nothing), and resets every connection in the middle of queries. The server runs with
 * a 2 s connection (pool acquisition) timeout and a 3 s statement timeout. Asserted:
 * - no request takes longer than BOUND_MS, 3 × (2 s + 3 s): a stalled database is a 503 (7054)
 *   with Retry-After, never a hang; every 503 has code 7054 and `Retry-After: 5`;
 * - every acknowledged write is there, with its event; an unacknowledged one is wholly there or
 *   wholly absent; its retry with the same key gives exactly one effect;
 * - the pool heals: requests succeed once the proxy forwards again, with no restart;
 * - no connection leaks: afterwards PostgreSQL holds at most the pool's size (10) of the
 *   server's connections (counted by application_name in pg_stat_activity), the proxy as many.
 * SQLite has no network to the database: the file runs on PostgreSQL only.
 */
const CONNECT_S = 2;
const STATEMENT_S = 3;
const BOUND_MS = 3 * (CONNECT_S + STATEMENT_S) * 1000;
const POOL_SIZE = 10;
const CLIENTS = LONG ? 32 : 12;

let tdb: TestDatabase;
let proxy: TcpProxy;
let server: ServerProcess | undefined;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };
const appName = `wsp-net-${randomBytes(4).toString('hex')}`;

before(async () => {
  if (ENGINE !== 'postgres') return;
  tdb = await openTestDatabase();
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
  const direct = new URL(tdb.env.DATABASE_URL!);
  proxy = await startTcpProxy(Number(direct.port || 5432), direct.hostname);
  const viaProxy = new URL(direct);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  viaProxy.searchParams.set('application_name', appName);
  server = await startServer({
    ...tdb.env,
    DATABASE_URL: viaProxy.toString(),
    WSP_MASTER_KEY: masterKey(),
    WSP_DB_CONNECT_TIMEOUT_SECONDS: String(CONNECT_S),
    WSP_DB_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_S),
    // The three faults' writers create tokens in one workspace: at the long settings (npm run
    // faults) more than the default quota of 100, whose 409 is not what this file tests.
    WSP_QUOTA_API_TOKENS: '100000',
  });
});
after(async () => {
  await server?.stop('SIGKILL');
  await proxy?.close();
  await tdb?.cleanup();
});
// Once every test, hook and report of this file is done and its process exits: exit at once.
// Sockets the proxy reset under a killed server sometimes never finished closing, and Node's
// exit-time cleanup of handles (FreeEnvironment -> CleanupHandles, seen in gdb) then spun until
// the runner's file timeout killed the process, its tests all passed. process.exit inside
// 'exit' ends the process without that cleanup; the reporters' files are written by then.
process.on('exit', (code) => process.exit(code));

/** The server's connections as PostgreSQL sees them. */
async function serverConnections(): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where application_name = ${appName}`.execute(tdb.database.db);
  return rows[0]!.n;
}

/** Polls a read until it answers 200; returns how long that took. */
async function recovery(): Promise<number> {
  const started = performance.now();
  await waitFor('the server to answer again', async () => (await api(server!.url, 'GET', '/v1/api_tokens?limit=1', { credential: boot.api_token, retry: false })).status === 200, {
    timeoutMs: 60_000,
    intervalMs: 50,
  });
  return performance.now() - started;
}

async function underLoad(t: TestContext, fault: (load: WriteLoad) => Promise<{ injected: string; recoveryMs: number; notes?: string }>, name: string) {
  const secret = (await api(server!.url, 'POST', '/v1/secrets', { credential: boot.session_token, workspaceId: boot.workspace_id, body: { name: `net-${randomBytes(3).toString('hex')}` } })).body;
  const load = new WriteLoad(() => server!.url, boot.session_token, boot.workspace_id, secret.id);
  load.start(CLIENTS);
  await waitFor('the load to get going', () => load.acked.length >= CLIENTS, { timeoutMs: 60_000, intervalMs: 20 });
  const outcome = await fault(load);
  const ackedBefore = load.acked.length;
  await waitFor('more writes acknowledged after the fault', () => load.acked.length >= ackedBefore + CLIENTS, { timeoutMs: 60_000, intervalMs: 20 });
  await load.stop();
  assert.equal(server!.child.exitCode, null, 'the server is still running');
  assert.deepEqual(load.unexpected, [], 'answers the load did not expect');
  assert.deepEqual(load.badUnavailable, [], '503 answers without code 7054 or Retry-After: 5');
  assert.ok(load.tally.worstMs <= BOUND_MS, `the slowest request took ${Math.round(load.tally.worstMs)} ms, over the ${BOUND_MS} ms bound`);
  const summary = load.tally.summary();
  const unacked = load.unacked.length;
  const retries = await load.retryUnacked();
  const { lost, answersLost } = await load.check(tdb.database.db);
  assert.equal(lost, 0);
  // No leak: the pool's connections shrink back to at most its size, on both ends.
  const pgSide = await waitFor(
    `at most ${POOL_SIZE} server connections in pg_stat_activity`,
    async () => {
      const n = await serverConnections();
      return n <= POOL_SIZE && proxy.open <= POOL_SIZE ? { n } : null;
    },
    { timeoutMs: 30_000, detail: async () => `pg_stat_activity ${await serverConnections()}, proxy ${proxy.open}` },
  );
  t.diagnostic(
    `${name}: ${summary}; ${unacked} unacknowledged, ${retries} retries with the same key, ${answersLost} answered 7055 (took effect, answer lost); connections after: ${pgSide.n} in pg_stat_activity, ${proxy.open} through the proxy (${proxy.accepted} accepted in all)`,
  );
  reportFault(t, {
    fault: name,
    injected: outcome.injected,
    requests: load.tally.requests,
    acknowledged: load.tally.acknowledged,
    lost,
    worstLatencyMs: load.tally.worstMs,
    recoveryMs: outcome.recoveryMs,
    notes: `${summary}; ${unacked} retried with the same key: one effect each${answersLost ? ` (${answersLost} answered 7055: COMMIT done, its answer cut)` : ''}; bound ${BOUND_MS} ms${outcome.notes ? `; ${outcome.notes}` : ''}`,
  });
}

test('PostgreSQL behind a proxy that adds latency, stalls and cuts connections: bounded 503s, nothing lost, the pool heals, no leak', { timeout: LONG ? 600_000 : 150_000 }, async (t) => {
  if (ENGINE !== 'postgres') {
    t.diagnostic('SQLite is a file in the server process: there is no network to the database to slow or cut (the outage analogue is test/reliability/database-outage.test.ts)');
    return;
  }

  await t.test('latency', async (t) => {
    await underLoad(
      t,
      async () => {
        proxy.setLatency(100);
        await sleep(LONG ? 10_000 : 2_000);
        proxy.setLatency(0);
        return { injected: `proxy delays every chunk 100 ms for ${LONG ? 10 : 2} s`, recoveryMs: await recovery() };
      },
      'database network: 100 ms latency',
    );
  });

  await t.test('stall', async (t) => {
    await underLoad(
      t,
      async (load) => {
        const before = load.tally.requests;
        const stalledFrom = performance.now();
        proxy.stall();
        // Long enough for every connection under way to time out, and for new ones to fail to connect.
        await waitFor('503s while the network is stalled', () => load.unacked.length >= CLIENTS, { timeoutMs: BOUND_MS * 2, intervalMs: 50 });
        await sleep(LONG ? 20_000 : 2_000);
        proxy.resume();
        const stalledMs = performance.now() - stalledFrom;
        const recoveryMs = await recovery();
        assert.ok(load.tally.requests > before, 'requests were answered during the stall');
        return { injected: `proxy forwards nothing (connections kept open) for ${Math.round(stalledMs / 1000)} s`, recoveryMs };
      },
      'database network: stalled',
    );
  });

  await t.test('cut', async (t) => {
    await underLoad(
      t,
      async () => {
        // Latency keeps queries in flight on every connection when the cuts come.
        proxy.setLatency(20);
        let cut = 0;
        const cuts = LONG ? 10 : 3;
        for (let i = 0; i < cuts; i++) {
          await sleep(300 + Math.random() * 400);
          cut += proxy.cut();
        }
        proxy.setLatency(0);
        assert.ok(cut > 0, 'connections were cut');
        return { injected: `proxy resets every connection ${cuts} times, 300-700 ms apart, queries in flight`, recoveryMs: await recovery(), notes: `${cut} connections cut` };
      },
      'database network: connections cut mid-query',
    );
  });
});
