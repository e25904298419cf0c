import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { fetchSlots, DEFAULT_FETCH_SLOT_LIMITS } from '../../src/git/fetch-slots.js';
import { addLargeCommit, bytesBeyondSocketBuffers, cloneRequest, eventually, gitProcessesOf, holdFetch } from '../git/big-repository.js';
import { installFixture } from './fixture.js';

/**
 * The clone endpoint runs one git process per request: at most 4 at once for one credential and
 * 16 for the server process, beyond that 429 / 503 with Retry-After. A client that goes away
 * takes its git process with it. Fetches are held open for real: the repository has a 16 MiB
 * commit of random bytes and the clients read nothing, so git blocks on its full pipe.
 */
let f: ReturnType<typeof installFixture>;
let base: string;
let installId: string;
let gitDir: string;
let head: string;
let otherToken: string;

const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    const { install } = await f.installed();
    await h.app.jobs.runDue();
    installId = install.id;
    gitDir = f.repoPath(installId);
    head = addLargeCommit(gitDir, bytesBeyondSocketBuffers());
    otherToken = (await h.admin.createApiToken(s.workspaceId, s.owner.userId, 'second')).token;
  },
});
const s = h.seeded;

const packUrl = () => `${base}/v1/installs/${installId}/repository.git/git-upload-pack`;
const refsUrl = () => `${base}/v1/installs/${installId}/repository.git/info/refs?service=git-upload-pack`;

/** A clone's upload-pack request whose answer is never read: its git process runs on until closed. */
const hold = (token: string) => holdFetch(packUrl(), head, { authorization: `Bearer ${token}` });

const get = (url: string, token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } });
const post = (token: string) =>
  fetch(packUrl(), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-git-upload-pack-request' }, body: new Uint8Array(cloneRequest(head)) });

describe('concurrent git fetches', () => {
  test('one credential runs at most 4 at once (429 with Retry-After), the server 16 (503 with Retry-After); a client that leaves frees its slot and kills its git', async () => {
    assert.deepEqual(fetchSlots.limits, DEFAULT_FETCH_SLOT_LIMITS);
    const held = await Promise.all(Array.from({ length: DEFAULT_FETCH_SLOT_LIMITS.perCredential }, () => hold(s.apiToken)));
    assert.deepEqual(
      held.map((x) => x.status),
      [200, 200, 200, 200],
    );
    assert.equal(fetchSlots.inUse(), 4);
    assert.ok(gitProcessesOf(gitDir).length >= 4, 'four git processes run');

    for (const res of [await post(s.apiToken), await get(refsUrl(), s.apiToken)]) {
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('retry-after'), '2');
      const body = await res.json();
      assert.equal(firstError(body).code, 7007);
      assert.match(firstError(body).message, /already runs 4 git fetches/);
    }
    // Another credential has its own share.
    const other = await get(refsUrl(), otherToken);
    assert.equal(other.status, 200);
    await other.arrayBuffer();

    // The server's own cap: 12 more fetches of other credentials fill it.
    const fillers = Array.from({ length: DEFAULT_FETCH_SLOT_LIMITS.perProcess - 4 }, (_, i) => fetchSlots.acquire(`filler-${i}`) as () => void);
    try {
      const full = await get(refsUrl(), otherToken);
      assert.equal(full.status, 503);
      assert.equal(full.headers.get('retry-after'), '2');
      assert.equal(firstError(await full.json()).code, 7098);
    } finally {
      for (const release of fillers) release();
    }

    // The clients go away: their git processes are killed and their slots come back.
    for (const x of held) x.close();
    assert.ok(await eventually(() => gitProcessesOf(gitDir).length === 0, 10_000), `git processes left: ${gitProcessesOf(gitDir).join(',')}`);
    assert.ok(await eventually(() => fetchSlots.inUse() === 0, 5000), `slots still held: ${fetchSlots.inUse()}`);
    const again = await get(refsUrl(), s.apiToken);
    assert.equal(again.status, 200);
    await again.arrayBuffer();
  });

  test('a fetch read to the end gives its slot back', async () => {
    const res = await post(s.apiToken);
    assert.equal(res.status, 200);
    const pack = Buffer.from(await res.arrayBuffer());
    assert.ok(pack.length > 16 * 1024 * 1024, 'the whole pack arrived');
    assert.ok(await eventually(() => fetchSlots.inUse() === 0, 5000));
  });

  test('the OpenAPI document lists 429 and 503 on both git routes', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    for (const [p, method] of [
      ['/v1/installs/{id}/repository.git/info/refs', 'get'],
      ['/v1/installs/{id}/repository.git/git-upload-pack', 'post'],
    ] as const) {
      const op = doc.paths[p][method];
      assert.ok(op.responses['429'] && op.responses['503'], `${method} ${p}`);
      assert.match(op.description, /at most 16 at once, at most 4 of them for one credential/);
    }
  });
});
