import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { adminJson, api, runWsp, startServer, type ServerProcess } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Graceful shutdown: on SIGTERM `wsp serve` stops taking connections, lets the request in flight
 * finish (here one whose body is still arriving, sent slowly by the client), then exits 0.
 */
let tdb: TestDatabase;
let server: ServerProcess | undefined;
/** Every server started here: after() kills any a failed test left running (else it outlives the file). */
const started: ServerProcess[] = [];
async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const srv = await startServer(env);
  started.push(srv);
  return srv;
}
before(async () => {
  tdb = await openTestDatabase();
});
after(async () => {
  await Promise.all(started.map((srv) => srv.stop('SIGKILL')));
  await tdb.cleanup();
});

/** Starts a POST whose body is sent in two parts; `finish()` sends the rest and resolves with the response. */
function slowPost(base: string, path: string, headers: Record<string, string>, body: string) {
  const url = new URL(path, base);
  const payload = Buffer.from(body);
  const half = Math.floor(payload.length / 2);
  let resolveResponse!: (r: { status: number; body: string }) => void;
  let rejectResponse!: (e: Error) => void;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    resolveResponse = resolve;
    rejectResponse = reject;
  });
  const req = http.request(
    { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) } },
    (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolveResponse({ status: res.statusCode ?? 0, body: text }));
    },
  );
  req.on('error', rejectResponse);
  response.catch(() => undefined); // a reset before finish() is the caller's to see, not an unhandled rejection
  req.write(payload.subarray(0, half));
  return {
    finish() {
      req.end(payload.subarray(half));
      return response;
    },
    abort() {
      req.destroy();
    },
  };
}

/**
 * `slowPost` as `boot`'s user, returned once the server has the request in hand: its headers
 * parsed, the credential checked (the body half read). The observable effect: the session's last
 * use, set back here to long ago, is then touched by the server's authentication (the onRequest
 * hook, src/auth/authenticator.ts), which runs only once a request is routed. A SIGTERM sent after
 * that finds the request in flight, however slowly the loaded machine runs the server.
 */
async function slowPostInFlight(srv: ServerProcess, boot: Record<string, string>, name: string) {
  const lastUse = async () => Number((await tdb.database.db.selectFrom('sessions').select('last_used_at').where('user_id', '=', boot.user_id!).executeTakeFirstOrThrow()).last_used_at);
  await tdb.database.db.updateTable('sessions').set({ last_used_at: 0 }).where('user_id', '=', boot.user_id!).execute();
  const req = slowPost(srv.url, '/v1/api_tokens', { authorization: `Bearer ${boot.session_token}`, 'service-context': boot.workspace_id! }, JSON.stringify({ name }));
  try {
    await waitFor('the server to authenticate the half-sent request (the session touched)', async () => (await lastUse()) > 0, {
      detail: () => srv.output.join('\n'),
    });
  } catch (err) {
    // Nothing left behind to keep this file running: the request's socket, the server.
    req.abort();
    await srv.stop('SIGKILL');
    throw err;
  }
  return req;
}

test('SIGTERM with a slow request in flight: the request completes, new connections are refused, exit 0', async () => {
  const boot = await adminJson(['bootstrap'], tdb.env);
  server = await serve(tdb.env);
  const base = server.url;
  assert.equal((await api(base, 'GET', '/healthz')).status, 200);

  const inflight = await slowPostInFlight(server, boot, 'made-during-shutdown');
  server.child.kill('SIGTERM');
  const srv = server;
  await waitFor('the server to say it is shutting down', () => srv.output.some((l) => l.includes('shutting down')), { detail: () => srv.output.join('\n') });
  // A chance to exit too early (there is no event to wait for: the point is that none comes).
  await sleep(200);
  assert.equal(server.child.exitCode, null, 'still running while a request is in flight');

  // No new connection is taken.
  const fresh = await fetch(`${base}/healthz`).then(
    (r) => r.status,
    () => 'refused',
  );
  assert.ok(fresh === 'refused' || fresh === 503, `a new request during shutdown: ${fresh}`);

  const res = await inflight.finish();
  assert.equal(res.status, 201, res.body);
  assert.match(JSON.parse(res.body).token, /^sk_svc_/);
  assert.equal(await server.stop('SIGTERM', 15_000), 0, server.output.join('\n'));
  server = undefined;

  const rows = await tdb.database.db.selectFrom('api_tokens').select('id').where('name', '=', 'made-during-shutdown').execute();
  assert.equal(rows.length, 1, 'the in-flight request did its work');
});

test('SIGTERM when idle: exit 0 promptly', async () => {
  server = await serve(tdb.env);
  assert.equal((await api(server.url, 'GET', '/healthz')).status, 200);
  const started = Date.now();
  assert.equal(await server.stop('SIGTERM'), 0);
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  server = undefined;
});

test('a request that never finishes does not hold the process: after WSP_SHUTDOWN_GRACE_SECONDS it exits 1', async () => {
  const boot = await adminJson(['bootstrap', '--force'], tdb.env);
  server = await serve({ ...tdb.env, WSP_SHUTDOWN_GRACE_SECONDS: '1' });
  const stuck = await slowPostInFlight(server, boot, 'never-finished');
  const started = Date.now();
  assert.equal(await server.stop('SIGTERM'), 1);
  assert.ok(Date.now() - started < 8_000, `took ${Date.now() - started} ms`);
  assert.ok(server.output.some((l) => l.includes('grace period over')));
  server = undefined;
  await stuck.finish().catch(() => undefined);
});

test('a port already in use: the error on stderr and exit 1, not a process left running without HTTP', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = blocker.address() as AddressInfo;
    const res = await runWsp(['serve'], { ...tdb.env, PORT: String(port), HOST: '127.0.0.1' }, 20_000);
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /EADDRINUSE/);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});
