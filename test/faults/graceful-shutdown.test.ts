import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, startWorker, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, client, isNetworkError, masterKey, repositories } from '../reliability/servers.js';
import { LONG, LoadTally, reportFault } from './report.js';

/**
 * Issue 22, item 5: SIGTERM to `wsp serve` while 32 clients read and write on keep-alive
 * connections, 4 of them in the middle of sending a body, renders are queued and the worker holds
 * a webhook delivery whose receiver does not answer (a job that outlasts the grace period).
 * - every request the server saw is answered, the slow uploads included; a request that failed
 *   on its connection left no trace (no log line for its id, its write absent): refused, never
 *   half-done;
 * - idle kept-alive connections are closed at the signal (a request sent on one then fails on
 *   its connection, unseen, and may be sent again elsewhere); an answer given while closing
 *   carries `Connection: close` (docs/spec-gaps.md, Shutdown);
 * - the process exits 0 within WSP_SHUTDOWN_GRACE_SECONDS; the delivery it still held is given
 *   back to the queue and a `wsp worker` on the same database runs it at once, not after the
 *   job lease (60 s);
 * - another server finds every acknowledged write, and every repository matches its renders.
 */
const CLIENTS = 32;
const SLOW_UPLOADS = 4;
const GRACE_SECONDS = 6;
const LEASE_SECONDS = 60;
const INSTALLS = 4;
/** How long the load runs before the signal. */
const LOAD_MS = LONG ? 20_000 : 2_500;

let tdb: TestDatabase;
let env: Record<string, string>;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };
const processes: ServerProcess[] = [];
let receiver: http.Server;
/** Webhook deliveries seen, by endpoint and webhook-id: when each attempt arrived. */
const deliveries = new Map<string, number[]>();

before(async () => {
  tdb = await openTestDatabase();
  env = {
    ...tdb.env,
    WSP_MASTER_KEY: masterKey(),
    WSP_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
    WSP_JOB_LEASE_SECONDS: String(LEASE_SECONDS),
    WSP_WEBHOOKS_ALLOW_HTTP: 'true',
    WSP_WEBHOOKS_ALLOW_PRIVATE: 'true',
    // The PATCH clients start a render each.
    WSP_QUOTA_RENDERS_PER_HOUR: '1000000',
  };
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
  // The first attempt of each delivery never gets an answer (it holds its job past the grace
  // period); the next one, from whichever worker took the job over, is answered at once.
  receiver = http.createServer((req, res) => {
    // The event's id: the same for both endpoints.
    const id = `${req.url} ${String(req.headers['webhook-id'])}`;
    const seen = deliveries.get(id) ?? [];
    seen.push(Date.now());
    deliveries.set(id, seen);
    req.resume();
    if (seen.length > 1) res.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  for (const p of processes) await p.stop('SIGKILL');
  receiver.closeAllConnections();
  receiver.close();
  await tdb.cleanup();
});

interface Sent {
  id: string;
  lane: string;
  start: number;
  end: number;
  status: number | 'network';
  connection: string | null;
  /** The secret version's payload, for writes of versions. */
  data?: string;
}

test(`SIGTERM with ${CLIENTS} clients, slow uploads and jobs in hand: answered, released, exit 0 within ${GRACE_SECONDS} s`, async (t: TestContext) => {
  const server = await startServer(env);
  processes.push(server);
  const c = client(boot.session_token, boot.workspace_id, { retry: false });
  const url = server.url;
  const pkg = await c.ok(url, 'POST', '/v1/packages', { name: 'shutdown' });
  const version = await c.ok(url, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n' } });
  const installs: { id: string }[] = [];
  for (let i = 0; i < INSTALLS; i++) installs.push(await c.ok(url, 'POST', '/v1/installs', { name: `sd-${i}`, package_id: pkg.id, version_id: version.id, values: { who: 'initial' } }));
  const secrets: { id: string }[] = [];
  for (let i = 0; i < 4; i++) secrets.push(await c.ok(url, 'POST', '/v1/secrets', { name: `sd-${i}` }));
  await c.ok(url, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`, event_types: ['secret.created'] });

  const sent: Sent[] = [];
  const tally = new LoadTally();
  let signalAt = Infinity;
  let serverGone = false;
  let n = 0;
  const requestId = () => `sd-${process.pid}-${++n}-${randomBytes(3).toString('hex')}`;
  const acked = { versions: [] as { secret: string; id: string; data: string }[], values: installs.map(() => [] as { who: string; start: number; end: number }[]) };
  const unexpected: string[] = [];

  const call = async (lane: string, method: string, path: string, body: unknown, want: number, extra: Record<string, string> = {}, data?: string) => {
    const id = requestId();
    const start = Date.now();
    try {
      const res = await api(url, method, path, { credential: boot.session_token, workspaceId: boot.workspace_id, body, headers: { 'x-request-id': id, ...extra }, retry: false });
      const end = Date.now();
      sent.push({ id, lane, start, end, status: res.status, connection: res.headers.get('connection'), ...(data ? { data } : {}) });
      tally.record(res.status, end - start, res.body?.errors?.[0]?.code);
      if (res.status !== want) unexpected.push(`${lane} ${method} ${path}: ${res.status} ${res.text.slice(0, 200)}`);
      return res.status === want ? res : null;
    } catch (err) {
      if (!isNetworkError(err)) throw err;
      sent.push({ id, lane, start, end: Date.now(), status: 'network', connection: null, ...(data ? { data } : {}) });
      tally.record('network', Date.now() - start);
      return null;
    }
  };
  /** One client: its requests one after another, until the server has gone (or refused it). */
  const lane = async (name: string, step: () => Promise<boolean>) => {
    while (!serverGone) if (!(await step())) return;
  };
  const lanes: Promise<void>[] = [];
  const loadStart = Date.now();
  for (let i = 0; i < CLIENTS - SLOW_UPLOADS; i++) {
    const kind = i % 3;
    if (kind === 0) {
      const secret = secrets[i % secrets.length]!;
      lanes.push(
        lane(`version-${i}`, async () => {
          const data = randomBytes(12).toString('base64');
          const res = await call(`version-${i}`, 'POST', `/v1/secrets/${secret.id}/versions`, { data }, 201, {}, data);
          if (res) acked.versions.push({ secret: secret.id, id: res.body.id, data });
          return res !== null;
        }),
      );
    } else if (kind === 1) {
      const k = i % INSTALLS;
      lanes.push(
        lane(`patch-${i}`, async () => {
          const who = `w${i}-${++n}`;
          const start = Date.now();
          const res = await call(`patch-${i}`, 'PATCH', `/v1/installs/${installs[k]!.id}`, { values: { who } }, 200, { 'if-match': '*' });
          if (res) acked.values[k]!.push({ who, start, end: Date.now() });
          return res !== null;
        }),
      );
    } else {
      const paths = ['/v1/secrets', `/v1/installs/${installs[i % INSTALLS]!.id}`, `/v1/installs/${installs[i % INSTALLS]!.id}/renders`];
      let j = 0;
      lanes.push(lane(`read-${i}`, async () => (await call(`read-${i}`, 'GET', paths[j++ % paths.length]!, undefined, 200)) !== null));
    }
  }

  // The load runs a while (renders queued, connections kept alive).
  await waitFor('the load to run', () => tally.acknowledged > 50 && Date.now() - loadStart > LOAD_MS, { intervalMs: 50 });
  // A delivery the server holds at the signal: made late, as the sender gives up after 10 s.
  await c.ok(url, 'POST', '/v1/secrets', { name: 'hook' });
  await waitFor('the server to hold a webhook delivery', () => deliveries.size === 1, { detail: () => server.output.slice(-20).join('\n') });
  // The slow uploads: half of each body sent.
  let signalled!: () => void;
  const signal = new Promise<void>((resolve) => (signalled = resolve));
  const uploads = Array.from({ length: SLOW_UPLOADS }, (_, i) => slowUpload(url, secrets[i % secrets.length]!.id, requestId(), signal));
  await Promise.all(uploads.map((u) => u.halfSent));
  // Two round trips on other connections: the server's event loop has read what was sent before them.
  for (let i = 0; i < 2; i++) await call('probe', 'GET', '/healthz', undefined, 200);

  let exitAt = 0;
  server.child.once('exit', () => (exitAt = Date.now()));
  signalAt = Date.now();
  server.child.kill('SIGTERM');
  // The rest of the slow bodies once the server refuses new connections: it is closing then.
  void waitFor('the server to refuse new connections', () => refusesConnections(url), { intervalMs: 20 }).then(signalled);
  // Another instance on the same database (and data directory), started now: it takes what the
  // stopping server releases (started earlier, it would have taken the deliveries itself).
  const worker = await startWorker(env);
  processes.push(worker);
  const code = await server.exited;
  const exitMs = exitAt - signalAt;
  serverGone = true;
  await Promise.all(lanes);
  const slow = await Promise.all(uploads.map((u) => u.done));
  for (const u of slow) {
    sent.push({ ...u, lane: 'slow-upload' });
    tally.record(u.status, u.end - u.start, undefined);
    if (u.status === 201) acked.versions.push({ secret: u.secret, id: u.versionId!, data: u.data! });
  }
  const log = server.output.join('\n');
  t.diagnostic(`deliveries (ms from the signal): ${JSON.stringify([...deliveries.values()].map((d) => d.map((x) => x - signalAt)))}`);
  for (const line of server.output.filter((l) => /shutting|released|grace|closed|error/.test(l)))
    t.diagnostic(`server +${(JSON.parse(line) as { time: number }).time - signalAt} ms: ${line.slice(0, 200)}`);
  const stoppingLine = JSON.parse(/\{[^\n]*"shutting down[^\n]*\}/.exec(log)![0]) as { time: number };
  assert.deepEqual(unexpected, [], 'answers no client expects');
  // Exit 0: the server's own grace timer, started as it logged "shutting down", had not fired
  // (it exits 1 when it does).
  assert.equal(code, 0, `exit code\n${server.output.slice(-30).join('\n')}`);
  // The grace period runs from the server taking the signal, as its log says: what a machine busy
  // with other work adds before the process is given the core to take it is not the server's
  // (6040 ms from the kill, under load, for an exit 0).
  const graceUsedMs = exitAt - stoppingLine.time;
  // Exit 0 already says the server's own timer had not fired; `exitAt` is when this process heard
  // of the exit, which a busy machine delays (6004 ms once, for an exit 0): a second of it allowed.
  assert.ok(graceUsedMs < GRACE_SECONDS * 1000 + 1000, `exited ${graceUsedMs} ms after its "shutting down" line (${exitMs} ms after SIGTERM was sent), grace ${GRACE_SECONDS} s`);

  // The slow uploads were under way at the signal and were answered after it.
  for (const u of slow) {
    assert.equal(u.status, 201, `a slow upload in flight at the signal: ${u.status} ${u.error ?? ''}`);
    assert.ok(u.end > signalAt);
    assert.equal(u.connection, 'close', 'an answer given while closing closes its connection');
  }
  // Anything served after the server began closing closed its connection.
  const late = sent.filter((s) => s.start > stoppingLine.time && s.status !== 'network');
  for (const s of late) assert.equal(s.connection, 'close', `${s.lane} sent after the signal: served with Connection: ${s.connection}`);
  // A request that failed on its connection was never seen: no line in the log, no write.
  const failed = sent.filter((s) => s.status === 'network');
  for (const f of failed) assert.ok(!log.includes(`"reqId":"${f.id}"`), `request ${f.id} (${f.lane}) was seen by the server but its connection failed`);
  const inFlight = sent.filter((s) => s.start < signalAt && s.end > signalAt && s.status !== 'network').length;

  // The deliveries the server held were released before the grace period ended and another
  // instance ran them at once.
  const released = /"jobs":\[([^\]]*)\][^\n]*jobs still running released/.exec(log);
  assert.ok(released, `the server released the jobs it held\n${server.output.slice(-30).join('\n')}`);
  const releasedLine = JSON.parse(/\{[^\n]*jobs still running released[^\n]*\}/.exec(log)![0]) as { time: number | string };
  const releasedAt = typeof releasedLine.time === 'number' ? releasedLine.time : Date.parse(releasedLine.time);
  // From the moment the job was released and the worker was up (it starts after the signal, so
  // that it cannot take the delivery before the server does).
  const workerUp = (JSON.parse(worker.output.find((l) => l.includes('"worker started"'))!) as { time: number }).time;
  const pickup = await waitFor(
    'the worker to deliver the released webhook',
    () => ([...deliveries.values()].every((d) => d.length >= 2) ? Math.max(...[...deliveries.values()].map((d) => d[1]!)) - Math.max(releasedAt, workerUp) : null),
    {
      timeoutMs: 30_000,
      detail: () => worker.output.slice(-20).join('\n'),
    },
  );
  assert.ok(pickup < (LEASE_SECONDS * 1000) / 6, `released jobs picked up ${pickup} ms after release (lease ${LEASE_SECONDS} s)`);

  // Another server finds every acknowledged write.
  const check = await startServer(env);
  processes.push(check);
  const lost: string[] = [];
  for (const v of acked.versions) {
    const res = await c.call(check.url, 'GET', `/v1/secrets/${v.secret}/versions/${v.id}:access`);
    if (res.status !== 200 || res.body.data !== v.data) lost.push(`secret version ${v.id}: ${res.status}`);
  }
  const ackedIds = new Set(acked.versions.map((v) => v.data));
  const stored = new Set<string>();
  for (const s of secrets) {
    for (const v of await c.all(check.url, `/v1/secrets/${s.id}/versions`)) {
      const res = await c.call(check.url, 'GET', `/v1/secrets/${s.id}/versions/${v.id}:access`);
      assert.equal(res.status, 200, res.text);
      stored.add(res.body.data);
    }
  }
  for (const f of failed.filter((f) => f.data)) assert.ok(!stored.has(f.data!), `a version whose request failed on its connection was written (${f.id})`);
  for (const [k, inst] of installs.entries()) {
    const now = await c.ok(check.url, 'GET', `/v1/installs/${inst.id}`);
    // Several lanes write each install, so the answer that arrived last need not be the write
    // that committed last. The stored value must be an acknowledged one that no acknowledged
    // write began after (a write that began once it was answered committed after it).
    const patches = acked.values[k]!;
    if (patches.length === 0) continue;
    const kept = patches.find((p) => p.who === now.values.who);
    if (!kept || patches.some((p) => p.start > kept.end)) lost.push(`install ${inst.id}: holds ${now.values.who}, acknowledged ${JSON.stringify(patches.slice(-4))}`);
  }
  assert.deepEqual(lost, [], 'acknowledged writes lost');
  assert.ok([...ackedIds].every((d) => stored.has(d)));
  // Renders left by the stopped server finish on the others; every repository matches its renders.
  for (const inst of installs) {
    const renders = await waitFor(`the renders of ${inst.id} to finish`, async () => {
      const list = await c.all(check.url, `/v1/installs/${inst.id}/renders`);
      return list.every((r: { state: string }) => r.state !== 'queued' && r.state !== 'running') ? list : null;
    });
    assert.ok(
      renders.every((r: { state: string }) => r.state === 'succeeded' || r.state === 'superseded'),
      JSON.stringify(renders.map((r: { state: string }) => r.state)),
    );
  }
  const repos = repositories(tdb.dataDir);
  assert.equal(repos.length, INSTALLS);
  for (const inst of installs) {
    checkRepository(
      repos.find((r) => r.endsWith(`${inst.id}.git`))!,
      await c.all(check.url, `/v1/installs/${inst.id}/renders`),
    );
  }
  const releasedJobs = released[1]!.split(',').length;
  for (const p of [check, worker]) assert.equal(await p.stop(), 0);

  reportFault(t, {
    fault: 'graceful shutdown under load',
    injected: `SIGTERM to wsp serve: ${CLIENTS} keep-alive clients (${SLOW_UPLOADS} mid-body), renders queued, a job held past the grace period`,
    requests: tally.requests,
    acknowledged: tally.acknowledged,
    lost: lost.length,
    worstLatencyMs: tally.worstMs,
    recoveryMs: null,
    notes: `exit 0 after ${exitMs} ms (${graceUsedMs} ms from its "shutting down" line; grace ${GRACE_SECONDS} s); ${inFlight} in flight at the signal answered; ${late.length} sent after it served with Connection: close; ${failed.length} refused on their connection (not seen by the server); ${releasedJobs} job(s) released at +${releasedAt - signalAt} ms, run by wsp worker ${Math.round(pickup)} ms after release (or its start at +${workerUp - signalAt} ms, if later; lease ${LEASE_SECONDS} s); ${tally.summary()}`,
  });
});

function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

interface SlowUpload {
  id: string;
  secret: string;
  start: number;
  end: number;
  status: number | 'network';
  connection: string | null;
  data?: string;
  versionId?: string;
  error?: string;
}

/**
 * A secret version sent in two halves: the first before the signal, the rest once `signal`
 * resolves. `halfSent` resolves once the first half has been handed to the connection.
 */
function slowUpload(url: string, secret: string, id: string, signal: Promise<void>): { halfSent: Promise<void>; done: Promise<SlowUpload> } {
  const data = randomBytes(12).toString('base64');
  const body = Buffer.from(JSON.stringify({ data }));
  const cut = Math.floor(body.length / 2);
  let firstPulled!: () => void;
  const halfSent = new Promise<void>((resolve) => (firstPulled = resolve));
  let part = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (part === 0) {
        part++;
        controller.enqueue(body.subarray(0, cut));
        return;
      }
      // Asked for more: the first half is written.
      firstPulled();
      await signal;
      controller.enqueue(body.subarray(cut));
      controller.close();
    },
  });
  const start = Date.now();
  const done = (async (): Promise<SlowUpload> => {
    try {
      const res = await fetch(`${url}/v1/secrets/${secret}/versions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${boot.session_token}`, 'service-context': boot.workspace_id, 'content-type': 'application/json', 'x-request-id': id },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      const json = (await res.json()) as { id?: string };
      return { id, secret, start, end: Date.now(), status: res.status, connection: res.headers.get('connection'), data, ...(json.id ? { versionId: json.id } : {}) };
    } catch (err) {
      return { id, secret, start, end: Date.now(), status: 'network', connection: null, data, error: (err as Error).message };
    }
  })();
  return { halfSent, done };
}
