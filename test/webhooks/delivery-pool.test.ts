// wsp-test: alone
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { startReceiver } from './receiver.js';
import { masterKey } from '../reliability/servers.js';

/**
 * Issue 48, item 2: one tenant's webhooks must not stall the others' background work. Workspace A
 * points its 20 endpoints (the quota) at a receiver on 127.0.0.1 that accepts connections and
 * never answers, and makes a burst of events: four times 20 deliveries, each holding its slot for
 * the contract's 10 s. A real `wsp serve` process runs them. Meanwhile:
 * - workspace B's render (POST /v1/installs) finishes in its usual time, measured against B's
 *   renders on the same server before the burst: renders run in the default slots, which
 *   deliveries never take (they have their own pool);
 * - B's own webhook delivery to a healthy receiver goes out (verified with `standardwebhooks`)
 *   while A's are still hanging: A holds at most its share of the delivery pool. The server runs
 *   with 24 delivery slots and a share of 20 (WSP_WEBHOOK_DELIVERY_CONCURRENCY,
 *   WSP_WEBHOOK_DELIVERIES_PER_WORKSPACE), so all 20 of A's endpoints hang at once and their
 *   circuits open within the test (3 timeouts each, about 30 s), while A still has deliveries
 *   enough queued ahead of B's to take every slot if nothing held it back;
 * - A's circuits open (GET /v1/webhooks shows `circuit.state: open`), and then A's deliveries
 *   hold no slot and no connection: the receiver's connections drop to none while A's
 *   deliveries are still pending, each waiting in the queue for its endpoint to half-open.
 * On the code before the pools (4 shared slots, no share, no circuit), B's render waited behind
 * A's deliveries (the issue measured 49.5 s) and this test fails at its first bound.
 */
const ENDPOINTS = 20;
const BURST_EVENTS = 4;
/** The job slots every kind of job shared in a process before the pools. */
const SHARED_SLOTS_BEFORE = 4;
const HANG_MS_BOUND = 10_000;

let tdb: TestDatabase;
let server: ServerProcess | undefined;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };

/** A TCP server on 127.0.0.1 that accepts every connection, reads what is sent, and never answers. */
async function startHangingReceiver() {
  const open = new Set<net.Socket>();
  let accepted = 0;
  let most = 0;
  const srv = net.createServer((socket) => {
    accepted++;
    open.add(socket);
    most = Math.max(most, open.size);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    port: (srv.address() as AddressInfo).port,
    open: () => open.size,
    /** The most connections open at once so far. */
    most: () => most,
    accepted: () => accepted,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}
let hang: Awaited<ReturnType<typeof startHangingReceiver>>;
let secretB: string | undefined;
let healthy: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  tdb = await openTestDatabase();
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
  hang = await startHangingReceiver();
  healthy = await startReceiver(() => secretB);
  server = await startServer({
    ...tdb.env,
    WSP_MASTER_KEY: masterKey(),
    WSP_WEBHOOKS_ALLOW_HTTP: 'true',
    WSP_WEBHOOKS_ALLOW_PRIVATE: 'true',
    WSP_WEBHOOK_DELIVERY_CONCURRENCY: '24',
    WSP_WEBHOOK_DELIVERIES_PER_WORKSPACE: String(ENDPOINTS),
  });
});
after(async () => {
  await server?.stop('SIGKILL');
  await hang?.close();
  await healthy?.close();
  await tdb?.cleanup();
});

/** A call as the bootstrap user in workspace `ws` (a 503 with Retry-After retried by `api`, as clients do); a non-2xx fails the test. */
async function ok(ws: string, method: string, url: string, body?: unknown): Promise<any> {
  const res = await api(server!.url, method, url, { credential: boot.session_token, workspaceId: ws, ...(body === undefined ? {} : { body }) });
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${url} -> ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Installs the package in workspace B and waits for the first render to succeed, polling every
 * 20 ms: the milliseconds from the POST to the render's success. Gives up once `boundMs` is well
 * past (Infinity: not done by then), so a render stuck behind other work fails the bound below
 * instead of the whole file's time limit.
 */
async function renderMs(pkg: { id: string; version: string }, name: string, boundMs = 60_000): Promise<number> {
  const started = performance.now();
  const install = await ok(boot.workspace_id, 'POST', '/v1/installs', { name, package_id: pkg.id, version_id: pkg.version, values: { who: name } });
  for (;;) {
    const renders = await ok(boot.workspace_id, 'GET', `/v1/installs/${install.id}/renders?limit=1`);
    const state = renders.data[0]?.state as string | undefined;
    if (state === 'succeeded') return performance.now() - started;
    assert.ok(state !== 'failed', `render of ${name} failed: ${JSON.stringify(renders.data[0])}`);
    if (performance.now() - started > boundMs + 5000) return Infinity;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

test(
  `${ENGINE}: ${ENDPOINTS} hanging endpoints of one workspace stall neither another workspace's render nor its webhook delivery; their circuits open and free the slots`,
  { timeout: 110_000 },
  async (t) => {
    const B = boot.workspace_id;
    const A = (await ok(B, 'POST', '/v1/workspaces', { name: 'A, whose receivers hang' })).id as string;

    // B's renders alone: one to warm the render threads, then the baseline.
    const made = await ok(B, 'POST', '/v1/packages', { name: 'pool' });
    const version = await ok(B, 'POST', `/v1/packages/${made.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n', 'dir/b.txt': '{{who}}!' } });
    const pkg = { id: made.id as string, version: version.id as string };
    await renderMs(pkg, 'warm-up');
    const alone = [await renderMs(pkg, 'alone-1'), await renderMs(pkg, 'alone-2'), await renderMs(pkg, 'alone-3')];
    const baseline = median(alone);
    const bound = 3 * baseline + 1000;
    t.diagnostic(`B's render alone: ${alone.map((ms) => ms.toFixed(0)).join(', ')} ms (median ${baseline.toFixed(0)}); bound under load ${bound.toFixed(0)} ms`);

    // B's endpoint, healthy; A's twenty, hanging.
    const hookB = await ok(B, 'POST', '/v1/webhooks', { url: healthy.url, event_types: ['snippet.*'] });
    secretB = hookB.secret;
    const hooksA: string[] = [];
    for (let i = 0; i < ENDPOINTS; i++) hooksA.push((await ok(A, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${hang.port}/a/${i}`, event_types: ['snippet.*'] })).id);

    // A's burst: every event to every endpoint.
    for (let i = 0; i < BURST_EVENTS; i++) await ok(A, 'POST', '/v1/snippets', { name: `burst-${i}`, source: 'select 1' });
    // Enough of them hanging to have filled every slot of a process before the pools.
    await waitFor("A's deliveries to hang", () => hang.open() >= SHARED_SLOTS_BEFORE, { timeoutMs: 20_000, detail: () => `open connections: ${hang.open()}` });
    const burstAt = performance.now();

    // B's render, while A's deliveries hang.
    const loaded = await renderMs(pkg, 'under-load', bound);
    t.diagnostic(`B's render while ${hang.open()} of A's deliveries hang: ${loaded.toFixed(0)} ms`);
    assert.ok(loaded <= bound, `B's render took ${loaded} ms while A's deliveries hang; alone it took ${baseline.toFixed(0)} ms (bound ${bound.toFixed(0)} ms)`);

    // B's own delivery goes out meanwhile, signed.
    const before = healthy.received.length;
    const snippetB = await ok(B, 'POST', '/v1/snippets', { name: 'b-event', source: 'select 1' });
    const got = await waitFor("B's delivery to its healthy receiver", () => healthy.received.slice(before).find((r) => JSON.parse(r.body).resource.id === snippetB.id), {
      timeoutMs: HANG_MS_BOUND,
      detail: () => `A's hanging connections: ${hang.open()}`,
    });
    assert.equal(got.verified, true, 'standardwebhooks verified it');
    const stillHanging = hang.open();
    assert.ok(stillHanging > 0, "A's deliveries were still hanging when B's went out");
    assert.equal(hang.most(), ENDPOINTS, `all ${ENDPOINTS} of A's endpoints had a delivery hanging at once (its share), never more`);
    t.diagnostic(`B's delivery went out ${(performance.now() - burstAt).toFixed(0)} ms into the burst, beside ${stillHanging} hanging deliveries of A`);

    // A's circuits open: 3 timeouts in a row each.
    const circuits = async () => ((await ok(A, 'GET', '/v1/webhooks?limit=100')).data as { id: string; circuit: { state: string; open_until: number | null } }[]).filter((w) => hooksA.includes(w.id));
    await waitFor(`the circuits of A's ${ENDPOINTS} endpoints to open`, async () => (await circuits()).every((w) => w.circuit.state === 'open'), {
      timeoutMs: 70_000,
      intervalMs: 500,
      detail: async () => JSON.stringify((await circuits()).map((w) => w.circuit.state)),
    });
    // Then A's deliveries hold nothing: the attempts under way end (their timeout), and none follows.
    await waitFor("A's connections to end", () => hang.open() === 0, { timeoutMs: HANG_MS_BOUND + 5000, detail: () => `open: ${hang.open()}` });
    const { db } = tdb.database;
    const pending = await db.selectFrom('webhook_deliveries').select(['id', 'webhook_id']).where('workspace_id', '=', A).where('state', '=', 'pending').execute();
    assert.ok(pending.length > 0, "A's deliveries are still pending");
    const open = new Map((await circuits()).map((w) => [w.id, w.circuit.open_until!]));
    const jobsOfA = () =>
      db.selectFrom('jobs').select(['state', 'run_at', 'payload', 'locked_by']).where('kind', '=', 'webhooks.deliver').where('group_key', '=', A).where('state', 'in', ['queued', 'running']).execute();
    // The receiver sees a connection end before the sender's job records the attempt and gives its
    // slot back: the slots are free once those records are written, not at the connection's end.
    const waiting = await waitFor(
      'no delivery of A to hold a slot',
      async () => {
        const jobs = await jobsOfA();
        return jobs.every((j) => j.state === 'queued') ? jobs : null;
      },
      { timeoutMs: 30_000, detail: async () => JSON.stringify((await jobsOfA()).filter((j) => j.state !== 'queued')) },
    );
    assert.ok(waiting.length > 0);
    const nowMs = Date.now();
    assert.ok(
      waiting.every((j) => Number(j.run_at) > nowMs),
      "every delivery of A waits in the queue for its endpoint's circuit to half-open",
    );
    assert.ok([...open.values()].every((until) => until * 1000 > nowMs));
    t.diagnostic(`${pending.length} of A's deliveries wait for their circuits; ${hang.accepted()} connections were made to the hanging receiver in all`);
  },
);
