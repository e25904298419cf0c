import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { WriteLoad } from '../helpers/write-load.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { masterKey } from '../reliability/servers.js';
import { LONG, reportFault } from './report.js';

/**
 * `wsp serve` killed (SIGKILL: no shutdown of any kind) while clients write, then started again
 * on the same database: every write it acknowledged is there, once; the unacknowledged ones,
 * retried with their keys, take effect once. On SQLite this is the test of the shared commit
 * (src/db/sqlite-driver.ts): many writes of a turn wait for one COMMIT, and none may have been
 * answered before it; the file passes SQLite's integrity check.
 */
const CLIENTS = 16;

let tdb: TestDatabase;
let env: Record<string, string>;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };
const servers: ServerProcess[] = [];

before(async () => {
  tdb = await openTestDatabase();
  env = { ...tdb.env, WSP_MASTER_KEY: masterKey(), WSP_QUOTA_API_TOKENS: '100000' };
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
});
after(async () => {
  for (const s of servers) await s.stop('SIGKILL');
  await tdb.cleanup();
});

test(
  'wsp serve killed by SIGKILL under write load: every acknowledged write is there once after a restart, the rest take effect once when retried',
  { timeout: LONG ? 600_000 : 120_000 },
  async (t: TestContext) => {
    const first = await startServer(env);
    servers.push(first);
    let url = first.url;
    const secret = await api(url, 'POST', '/v1/secrets', { credential: boot.api_token, body: { name: 'killed' } });
    assert.equal(secret.status, 201, secret.text);
    const load = new WriteLoad(() => url, boot.session_token, boot.workspace_id, secret.body.id);
    load.start(CLIENTS);
    await waitFor('the load to get going', () => load.acked.length >= (LONG ? 2000 : 200), { timeoutMs: 60_000, intervalMs: 5 });
    const ackedBeforeKill = load.acked.length;
    first.child.kill('SIGKILL');
    assert.equal(await first.exited, 'SIGKILL');
    await load.stop();

    const second = await startServer(env);
    servers.push(second);
    url = second.url;
    // The killed server's claims on its keys (running, or committed with their answers lost) hold
    // for their lease (120 s, src/http/idempotency.ts) before a retry may take them over or be told
    // 7055: the wait is taken as done rather than spent.
    await tdb.database.db.updateTable('idempotency_keys').set({ locked_until: 0 }).where('state', '!=', 'done').execute();
    const unacked = load.unacked.length;
    const retries = await load.retryUnacked();
    const { lost, twice, answersLost } = await load.check(tdb.database.db);
    assert.equal(lost, 0);
    assert.equal(twice, 0);
    if (ENGINE === 'sqlite') {
      const { rows } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(tdb.database.db);
      assert.deepEqual(rows, [{ integrity_check: 'ok' }]);
    }
    reportFault(t, {
      fault: 'wsp serve killed',
      injected: `SIGKILL to wsp serve under ${CLIENTS} writers (API tokens and secret versions, each with an Idempotency-Key)`,
      requests: load.tally.requests,
      acknowledged: load.tally.acknowledged,
      lost,
      worstLatencyMs: load.tally.worstMs,
      recoveryMs: null,
      notes: `${ackedBeforeKill} acknowledged before the kill; ${unacked} unacknowledged (in flight), ${retries} retries with their keys: ${answersLost} had taken effect (409 7055), the others made once; ${load.tally.summary()}`,
    });
  },
);
