import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { firstError, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { fetchSlots, DEFAULT_FETCH_SLOT_LIMITS } from '../../src/git/fetch-slots.js';
import { addLargeCommit, bytesBeyondSocketBuffers, cloneRequest, eventually, gitProcessesOf, holdFetch } from '../git/big-repository.js';
import { installFixture } from './fixture.js';

/**
 * Issue 15, item 4: one person minting sessions (a device login each) cannot take every git fetch
 * slot: one user holds at most 4 over all their sessions, one workspace 8, and another workspace
 * is still served. A fetch whose client stops reading is ended once the connection has passed no
 * data for the idle time (here 2 s; WSP_IDLE_TIMEOUT_SECONDS, 120 by default): its git process is
 * killed and its slot given back. Before: the slots were per credential only, and a stalled
 * fetch held its slot for up to 10 minutes.
 */
let b: Seed;
let base: string;
let installA: string;
let installB: string;
let gitDir: string;
let head: string;

const h = useTestApp({
  config: { http: { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, idleTimeoutMs: 2000, keepAliveTimeoutMs: 1000, maxHeaderBytes: 16 * 1024 } },
  seed: 'A',
  setup: async () => {
    b = await h.seed('B');
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    const fa = installFixture(h, a);
    installA = (await fa.installed()).install.id;
    installB = (await installFixture(h, b).installed()).install.id;
    await h.app.jobs.runDue();
    gitDir = fa.repoPath(installA);
    head = addLargeCommit(gitDir, bytesBeyondSocketBuffers());
  },
});
const a = h.seeded;

const packUrl = (installId: string) => `${base}/v1/installs/${installId}/repository.git/git-upload-pack`;

const hold = (installId: string, token: string) => holdFetch(packUrl(installId), head, { authorization: `Bearer ${token}`, 'service-context': a.workspaceId });

test("four sessions of one member hold that user's 4 slots, a fifth session is refused, another workspace is served; stalled fetches end at the idle time", async () => {
  assert.deepEqual(fetchSlots.limits, DEFAULT_FETCH_SLOT_LIMITS);
  const sessions = [];
  for (let i = 0; i < 5; i++) sessions.push((await h.admin.createSession(a.member.userId)).session_token);
  const held = await Promise.all(sessions.slice(0, 4).map((t) => hold(installA, t)));
  assert.deepEqual(
    held.map((x) => x.status),
    [200, 200, 200, 200],
  );

  const fifth = await fetch(packUrl(installA), {
    method: 'POST',
    headers: { authorization: `Bearer ${sessions[4]}`, 'service-context': a.workspaceId, 'content-type': 'application/x-git-upload-pack-request' },
    body: new Uint8Array(cloneRequest(head)),
  });
  assert.equal(fifth.status, 429);
  assert.equal(fifth.headers.get('retry-after'), '2');
  const body = await fifth.json();
  assert.equal(firstError(body).code, 7007);
  assert.match(firstError(body).message, /This user already runs 4 git fetches/);

  // Another workspace is served while the member's four fetches stall.
  const other = await fetch(`${base}/v1/installs/${installB}/repository.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${b.apiToken}` } });
  assert.equal(other.status, 200);
  await other.arrayBuffer();

  // Nobody reads: after the idle time the server closes them, kills their git and frees the slots.
  const started = Date.now();
  await Promise.all(held.map((x) => x.closed));
  const tookMs = Date.now() - started;
  assert.ok(await eventually(() => fetchSlots.inUse() === 0, 10_000), `slots still held: ${fetchSlots.inUse()}`);
  assert.ok(await eventually(() => gitProcessesOf(gitDir).length === 0, 10_000), `git processes left: ${gitProcessesOf(gitDir).join(',')}`);
  assert.ok(tookMs < 15_000, `the stalled fetches ended after ${tookMs} ms`);
});

test('one workspace holds at most 8 slots over all its members and tokens', () => {
  const releases: (() => void)[] = [];
  for (let i = 0; i < DEFAULT_FETCH_SLOT_LIMITS.perWorkspace; i++) {
    const r = fetchSlots.acquire({ credential: `c${i}`, user: `u${i}`, workspace: 'ws_full' });
    assert.equal(typeof r, 'function', `slot ${i + 1}`);
    releases.push(r as () => void);
  }
  assert.equal(fetchSlots.acquire({ credential: 'c-next', user: 'u-next', workspace: 'ws_full' }), 'workspace');
  const elsewhere = fetchSlots.acquire({ credential: 'c-next', user: 'u-next', workspace: 'ws_other' });
  assert.equal(typeof elsewhere, 'function', 'another workspace is not full');
  releases.push(elsewhere as () => void);
  // A workspace API token (no user) is held to its own share in any case.
  for (let i = 0; i < DEFAULT_FETCH_SLOT_LIMITS.perCredential - 1; i++) releases.push(fetchSlots.acquire({ credential: 'c-next', user: null, workspace: `ws_${i}` }) as () => void);
  assert.equal(fetchSlots.acquire({ credential: 'c-next', user: null, workspace: 'ws_9' }), 'credential');
  for (const release of releases) release();
  assert.equal(fetchSlots.inUse(), 0);
});
