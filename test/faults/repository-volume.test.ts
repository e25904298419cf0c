import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { bindMount, isMountPoint, mountSkip, remount, unmount, unmountAndRemove } from '../helpers/mounts.js';
import { waitFor } from '../helpers/wait.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { checkRepository, client, masterKey } from '../reliability/servers.js';
import { LoadTally, LONG, reportFault } from './report.js';
import type { Schemas } from '../helpers/test-app.js';

/**
 * Issue 22, item 4: the installs' repository volume read-only, then missing, for real. The
 * repositories live in a directory of their own (`store`), bind-mounted at the server's
 * WSP_REPO_DIR: `mount -o remount,bind,ro` makes it read-only (chmod stops nobody running as
 * root), `umount` takes it away and leaves the empty mount point, as a volume that did not mount.
 * While each lasts:
 * - /readyz answers 503 with a 7058 entry naming the problem (`read-only`, `missing`);
 * - a restore answers 503 (7058) naming it, with Retry-After, and changes nothing;
 * - a render queued meanwhile (a PATCH, an install created) waits and says why (`message`), its
 *   operation not done; nothing is written on the empty mount point;
 * - every other read and write answers as ever.
 * Once the volume is back (remounted rw, mounted again), with no restart, the waiting renders
 * complete, the restore made again completes, and every repository passes checkRepository.
 */
const skip = mountSkip();
/** Requests of each kind while a fault lasts: under npm run faults, more of them. */
const ROUNDS = LONG ? 100 : 8;

let tdb: TestDatabase | undefined;
let store: string | undefined;
let repoDir: string | undefined;
let server: ServerProcess | undefined;
let env: Record<string, string>;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };

before(async () => {
  if (skip) return;
  tdb = await openTestDatabase();
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
  store = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-repo-store-'));
  repoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-repo-volume-'));
  bindMount(store, repoDir);
  env = { ...tdb.env, WSP_REPO_DIR: repoDir, WSP_MASTER_KEY: masterKey() };
});

after(async () => {
  await server?.stop('SIGKILL');
  if (repoDir) unmountAndRemove(repoDir);
  if (store) fs.rmSync(store, { recursive: true, force: true });
  await tdb?.cleanup();
});

type Render = Schemas['Render'];

test(
  'the repository volume read-only, then missing: restores answer 503 (7058) and renders wait, saying why; /readyz names it; everything else works; all completes once it is back',
  { skip, timeout: LONG ? 600_000 : 120_000 },
  async (t: TestContext) => {
    server = await startServer(env);
    const url = server.url;
    const c = client(boot.session_token, boot.workspace_id, { retry: false });
    const renders = async (installId: string): Promise<Render[]> => c.all(url, `/v1/installs/${installId}/renders`);
    const settled = async (installId: string) => {
      const list = await renders(installId);
      return list.every((r) => r.state !== 'queued' && r.state !== 'running') ? list : null;
    };

    const pkg = await c.ok(url, 'POST', '/v1/packages', { name: 'volume' });
    const version = await c.ok(url, 'POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n' } });
    const install = async (name: string) => c.ok(url, 'POST', '/v1/installs', { name, package_id: pkg.id, version_id: version.id, values: { who: 'before' } });
    const installs = [await install('volume-0'), await install('volume-1')];
    const firsts: Render[] = [];
    for (const inst of installs) firsts.push((await waitFor('the first render', () => settled(inst.id)))[0]!);
    assert.deepEqual(
      firsts.map((r) => r.state),
      ['succeeded', 'succeeded'],
    );
    const secret = await c.ok(url, 'POST', '/v1/secrets', { name: 'volume' });
    assert.equal((await c.call(url, 'GET', '/readyz')).status, 200);

    /**
     * The fault's requests: reads and writes elsewhere answer as ever, a restore 503 (7058) naming
     * `problem`, and a PATCH's render waits, saying so. Returns the waiting render.
     */
    async function underFault(problem: 'read-only' | 'missing', words: RegExp, tally: LoadTally, acked: string[]): Promise<Render> {
      const timed = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
        const started = performance.now();
        const res = await c.call(url, method, route, body, headers);
        tally.record(res.status, performance.now() - started, res.body?.errors?.[0]?.code);
        return res;
      };
      const ready = await timed('GET', '/readyz');
      assert.equal(ready.status, 503, ready.text);
      const entry = ready.body.errors.find((e: { code: number }) => e.code === 7058);
      assert.equal(entry?.metadata?.problem, problem, ready.text);
      assert.equal(entry?.metadata?.part, 'repositories');
      assert.match(entry.message, words);

      const inst = installs[problem === 'read-only' ? 0 : 1]!;
      const patched = await timed('PATCH', `/v1/installs/${inst.id}`, { values: { who: problem } }, { 'if-match': '*' });
      assert.equal(patched.status, 200, patched.text);
      for (let i = 0; i < ROUNDS; i++) {
        const now = await timed('GET', `/v1/installs/${installs[0]!.id}`);
        assert.equal(now.status, 200, now.text);
        const restore = await timed('POST', `/v1/installs/${installs[0]!.id}:restore`, { render_id: firsts[0]!.id }, { 'if-match': now.body.etag, 'idempotency-key': randomUUID() });
        assert.equal(restore.status, 503, restore.text);
        assert.equal(restore.body.errors[0].code, 7058);
        assert.equal(restore.body.errors[0].metadata.problem, problem);
        assert.match(restore.body.errors[0].message, words);
        assert.equal(restore.headers.get('retry-after'), '30');
        const v = await timed('POST', `/v1/secrets/${secret.id}/versions`, { data: Buffer.from(`${problem} ${i}`).toString('base64') });
        assert.equal(v.status, 201, v.text);
        acked.push(v.body.id);
        for (const route of ['/v1/installs', `/v1/installs/${inst.id}`, `/v1/renders/${firsts[1]!.id}`, `/v1/secrets/${secret.id}/versions?limit=5`, '/v1/packages']) {
          const res = await timed('GET', route);
          assert.equal(res.status, 200, `${route}: ${res.text}`);
        }
      }
      const waiting = await waitFor(
        `the render to wait for the ${problem} volume`,
        async () => {
          const [latest] = await renders(inst.id);
          return latest && latest.state !== 'succeeded' && latest.message?.startsWith('Waiting: ') && words.test(latest.message) ? latest : null;
        },
        { detail: async () => JSON.stringify((await renders(inst.id))[0]) },
      );
      const op = await c.ok(url, 'GET', `/v1/operations/${waiting.operation_id}`);
      assert.equal(op.done, false, 'the render is retried, not given up');
      return waiting;
    }

    /** Once the volume is back: /readyz, the waiting renders, a restore made again. Returns the recovery time. */
    async function afterFault(waiting: Render[], back: number): Promise<number> {
      await waitFor('/readyz to answer 200', async () => (await c.call(url, 'GET', '/readyz')).status === 200);
      for (const r of waiting) {
        await waitFor(
          'the waiting render to complete',
          async () => {
            const now = await c.ok(url, 'GET', `/v1/renders/${r.id}`);
            return now.state === 'succeeded';
          },
          { timeoutMs: 90_000, detail: async () => JSON.stringify(await c.ok(url, 'GET', `/v1/renders/${r.id}`)) },
        );
      }
      const recovery = performance.now() - back;
      const now = await c.ok(url, 'GET', `/v1/installs/${installs[0]!.id}`);
      const restored = await c.ok(url, 'POST', `/v1/installs/${installs[0]!.id}:restore`, { render_id: firsts[0]!.id }, { 'if-match': now.etag, 'idempotency-key': randomUUID() });
      await waitFor('the restore to complete', async () => {
        const op = await c.ok(url, 'GET', `/v1/operations/${restored.render.operation_id}`);
        if (op.done) assert.equal(op.error, null, JSON.stringify(op));
        return op.done;
      });
      return recovery;
    }

    const acked: string[] = [];
    // Read-only.
    const roTally = new LoadTally();
    remount(repoDir!, 'ro', true);
    const roWaiting = await underFault('read-only', /read-only/, roTally, acked);
    remount(repoDir!, 'rw', true);
    const roRecovery = await afterFault([roWaiting], performance.now());

    // Missing: the mount point is left empty. An install made meanwhile gets no repository there.
    const missingTally = new LoadTally();
    unmount(repoDir!);
    assert.ok(!isMountPoint(repoDir!));
    const missingWaiting = await underFault('missing', /missing/, missingTally, acked);
    const late = await install('volume-late');
    const lateRender = await waitFor("the new install's render to wait", async () => {
      const [r] = await renders(late.id);
      return r && r.message?.startsWith('Waiting: ') && /missing/.test(r.message) ? r : null;
    });
    assert.deepEqual(fs.readdirSync(repoDir!), [], 'nothing is written on the empty mount point');
    bindMount(store!, repoDir!);
    const missingRecovery = await afterFault([missingWaiting, lateRender], performance.now());

    // Nothing lost, nothing corrupt, no restart.
    const versions = new Set((await c.all(url, `/v1/secrets/${secret.id}/versions`)).map((v: { id: string }) => v.id));
    const lost = acked.filter((id) => !versions.has(id)).length;
    assert.equal(lost, 0);
    for (const inst of [...installs, late]) {
      const all = await waitFor('every render to finish', () => settled(inst.id));
      assert.deepEqual(
        all.filter((r) => r.state === 'failed'),
        [],
        'no render failed',
      );
      checkRepository(path.join(store!, `${inst.id}.git`), all);
    }
    assert.equal(server.child.exitCode, null, 'no restart: the same process throughout');

    reportFault(t, {
      fault: 'repository volume read-only',
      injected: `mount -o remount,bind,ro of WSP_REPO_DIR, ${ROUNDS} rounds of a restore, a secret version and 5 reads`,
      requests: roTally.requests,
      acknowledged: roTally.acknowledged,
      lost,
      worstLatencyMs: roTally.worstMs,
      recoveryMs: roRecovery,
      notes: `${roTally.summary()}; recovery: remount rw to the waiting render succeeded`,
    });
    reportFault(t, {
      fault: 'repository volume missing',
      injected: `umount of WSP_REPO_DIR's bind mount, ${ROUNDS} rounds as above, an install created`,
      requests: missingTally.requests,
      acknowledged: missingTally.acknowledged,
      lost,
      worstLatencyMs: missingTally.worstMs,
      recoveryMs: missingRecovery,
      notes: `${missingTally.summary()}; recovery: mount again to both waiting renders succeeded`,
    });
  },
);
