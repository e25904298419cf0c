import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { createTestApp, as, ENGINE, type TestApp, type Seed } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait.js';
import { injectClient } from '../helpers/test-app.js';
import { unwrap } from '@workspace-platform/sdk';

/**
 * Issue 15, item 11: a database that cannot be reached is a 503 with Retry-After and code 7054
 * (not 500 7099), on reads and writes, while /healthz stays up and /readyz says 503; and the
 * server recovers by itself once the database is back. PostgreSQL: a cluster of this test's own
 * (scripts/pg-throwaway.sh) is really stopped and started. SQLite: another connection holds the
 * write lock past the busy timeout.
 */
const script = path.join(REPO_ROOT, 'scripts/pg-throwaway.sh');
const clusterDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-outage-pg-'));
let h: TestApp;
let s: Seed;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

before(async () => {
  if (ENGINE === 'postgres') {
    const url = execFileSync('bash', [script, 'start', String(await freePort()), clusterDir], { encoding: 'utf8' }).trim();
    // The harness makes the app's schema on the PostgreSQL this variable names: this test's own.
    process.env.WSP_TEST_PG_URL = url;
  }
  h = await createTestApp();
  s = await h.seed();
});
after(async () => {
  await h?.close().catch(() => undefined);
  if (ENGINE === 'postgres') execFileSync('bash', [script, 'stop', clusterDir]);
  fs.rmSync(clusterDir, { recursive: true, force: true });
});

const list = () => h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(s.apiToken) });
const create = (name: string) => h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name } });

function assertUnavailable(res: Awaited<ReturnType<typeof list>>, what: string) {
  assert.equal(res.statusCode, 503, `${what}: ${res.body}`);
  assert.equal(res.headers['retry-after'], '5', what);
  const body = res.json();
  assert.equal(body.success, false);
  assert.equal(body.errors[0].code, 7054, what);
  assert.deepEqual(body.errors[0].metadata, { retry_after: '5' });
}

test('the database unreachable: reads and writes answer 503 7054 with Retry-After; liveness stays up; all recovers by itself', { timeout: 120_000 }, async () => {
  assert.equal((await list()).statusCode, 200);
  if (ENGINE === 'postgres') {
    execFileSync('bash', [script, 'pause', clusterDir]);
    assertUnavailable(await list(), 'a read');
    assertUnavailable(await create('during'), 'a write');
    assertUnavailable(await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(s.apiToken) }), 'a read on a fresh connection');
    const token = await h.app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'wsp-cli', device_code: 'x' } });
    assert.equal(token.statusCode, 503);
    assert.equal(token.json().error, 'temporarily_unavailable');
    assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    execFileSync('bash', [script, 'resume', clusterDir]);
  } else {
    // Another process's write transaction, held past the server's busy timeout (5 s).
    const other = new SqliteDatabase(path.join(h.config.dataDir, 'wsp.sqlite'));
    other.prepare('BEGIN EXCLUSIVE').run();
    try {
      assertUnavailable(await create('during'), 'a write');
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }
  }
  await waitFor('the server to answer again', async () => (await list()).statusCode === 200, { timeoutMs: 30_000 });
  const made = await injectClient(h.app, s.owner.session, s.workspaceId).POST('/v1/api_tokens', { body: { name: 'after' } });
  assert.equal(made.response.status, 201);
  assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  const names = (await unwrap(injectClient(h.app, s.apiToken).GET('/v1/api_tokens'))).data.map((t) => t.name);
  assert.ok(names.includes('after') && !names.includes('during'), `nothing half-written: ${names.join(', ')}`);
});
