import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ENGINE } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { ProviderStub } from '../compute/provider-stub.js';
import { checkRepository, client, git } from '../reliability/servers.js';
import { LONG, LoadTally, reportFault } from './report.js';
import { PREVIOUS_RELEASE, previousReleaseBin } from './previous-release.js';
import { caller, differences, listingAt } from './upgrade-data.js';
import { adminOf, fixtureMasterKey, loadFixture, readManifest, type LoadedFixture } from './upgrade-fixture.js';

/**
 * Issue 22, item 7: a database made by the previous release (test/fixtures/upgrade, written
 * through that release's API by scripts/make-upgrade-fixture.ts) is upgraded by starting the
 * current `wsp serve` on it, while a server of the previous release keeps serving the same
 * database under load (a rolling upgrade); then everything the fixture wrote, and everything
 * the old server acknowledged during the upgrade, is read back through the new server.
 */
const M = readManifest()[ENGINE];
const PROVIDER_TOKEN = 'upgrade-fixture-provider';
/** How long the old server is loaded once the new one has migrated the database. */
const AFTER_MS = LONG ? 60_000 : 4_000;
const LANES = 3;

let fx: LoadedFixture;
let stub: ProviderStub;
let env: Record<string, string>;
let oldBin: string;
let oldServer: ServerProcess | undefined;
let newServer: ServerProcess | undefined;
let session: string;

before(async () => {
  oldBin = await previousReleaseBin();
  fx = await loadFixture(ENGINE, process.env.WSP_TEST_PG_URL);
  stub = new ProviderStub([PROVIDER_TOKEN]);
  await stub.start();
  env = {
    ...fx.env,
    WSP_MASTER_KEY: fixtureMasterKey(),
    WSP_PROVIDER_URL: stub.url,
    WSP_PROVIDER_TOKEN: PROVIDER_TOKEN,
    // The fixture's webhook points at 127.0.0.1:9 (nothing listens): its deliveries fail on loopback.
    WSP_WEBHOOKS_ALLOW_HTTP: 'true',
    WSP_WEBHOOKS_ALLOW_PRIVATE: 'true',
    // The revoked token is tried on purpose.
    WSP_AUTH_FAILURES_PER_MINUTE: '100000',
    WSP_RATE_LIMIT_PER_MINUTE: '1000000',
  };
  // The fixture's sessions may have expired since it was made (30 idle days): a new one, made by
  // the old release's own command before anything of the new one touches the database.
  session = adminOf(oldBin, ['session', 'create', '--user', M.ownerUserId], env).session_token!;
});
after(async () => {
  await Promise.all([oldServer?.stop(), newServer?.stop()]);
  await stub?.stop();
  fx?.cleanup();
});

interface Acked {
  secret: { id: string; data: string }[];
  snippet: { id: string; name: string }[];
  revokedTokens: string[];
}

/**
 * One lane of load on `base`: writes only resources of its own (the fixture's stay as written,
 * for the comparison after) and reads the fixture's. Every answer is timed and must be 2xx.
 */
async function lane(base: string, laneNo: number, tally: LoadTally, acked: Acked, stop: { now: boolean }, unexpected: string[]): Promise<void> {
  const owner = client(session, M.workspaceId);
  const secret = M.payloads[0]!;
  const install = M.installs[0]!;
  const dashboard = M.dashboards[0]!;
  const timed = async (method: string, url: string, body?: unknown, cred = owner) => {
    const t0 = performance.now();
    let res;
    try {
      res = await cred.call(base, method, url, body);
    } catch (e) {
      tally.record('network', performance.now() - t0);
      unexpected.push(`${method} ${url}: ${(e as Error).message}`);
      return null;
    }
    tally.record(res.status, performance.now() - t0, res.body?.errors?.[0]?.code);
    if (res.status < 200 || res.status >= 300) {
      unexpected.push(`${method} ${url} -> ${res.status} ${res.text.slice(0, 300)}`);
      return null;
    }
    return res.body ?? {};
  };
  for (let n = 0; !stop.now; n++) {
    const tag = `roll-${laneNo}-${n}`;
    const data = Buffer.from(`${tag} payload`).toString('base64');
    const s = await timed('POST', '/v1/secrets', { name: tag });
    if (s) {
      const v = await timed('POST', `/v1/secrets/${s.id}/versions`, { data });
      if (v) acked.secret.push({ id: `${s.id}/versions/${v.id}`, data });
    }
    const read = await timed('GET', `/v1/secrets/${secret.secretId}/versions/${secret.versionId}:access`);
    if (read && read.data !== secret.data) unexpected.push(`the fixture's payload read ${read.data}`);
    const sn = await timed('POST', '/v1/snippets', { name: tag, source: `select '${tag}'` });
    if (sn) acked.snippet.push({ id: sn.id, name: tag });
    const tok = await timed('POST', '/v1/api_tokens', { name: tag });
    if (tok) {
      await timed('GET', '/v1/secrets?limit=5', undefined, client(tok.token, M.workspaceId));
      if ((await timed('DELETE', `/v1/api_tokens/${tok.id}`)) !== null) acked.revokedTokens.push(tok.token);
    }
    for (const url of [
      `/v1/installs/${install.id}`,
      `/v1/installs/${install.id}/repository`,
      `/v1/installs/${install.id}/renders?limit=10`,
      `/v1/dashboards/${dashboard.id}`,
      `/v1/dashboards/${dashboard.id}/revisions?limit=10`,
      '/v1/notifications?limit=10',
      '/v1/machines?limit=10',
      '/v1/compute/suspensions',
      '/v1/packages?limit=10',
      '/v1/api_tokens?limit=10',
      '/v1/audit_events?limit=10',
      '/v1/webhooks?limit=10',
    ]) {
      await timed('GET', url);
    }
  }
}

test(`rolling upgrade (${ENGINE}): the previous release (${PREVIOUS_RELEASE.commit.slice(0, 7)}) serves without errors while the current one migrates its database`, async (t: TestContext) => {
  oldServer = await startServer(env, [], [oldBin, 'serve']);
  const tally = new LoadTally();
  const onNew = new LoadTally();
  const acked: Acked = { secret: [], snippet: [], revokedTokens: [] };
  const unexpected: string[] = [];
  const unexpectedOnNew: string[] = [];
  const stop = { now: false };
  const lanes = Array.from({ length: LANES }, (_, i) => lane(oldServer!.url, i, tally, acked, stop, unexpected));
  await waitFor('the old server answering under load', () => tally.acknowledged >= 20, { timeoutMs: 60_000 });
  const before = tally.requests;
  const t0 = performance.now();
  newServer = await startServer(env);
  const upgradeMs = performance.now() - t0;
  const during = tally.requests - before;
  // The new server serves too (its own lane), while the old one goes on.
  const stopNew = { now: false };
  const newLane = lane(newServer.url, 99, onNew, acked, stopNew, unexpectedOnNew);
  const afterStart = tally.requests;
  await sleep(AFTER_MS);
  await waitFor('requests answered by the old server after the upgrade', () => tally.requests - afterStart >= 30, { timeoutMs: 60_000 });
  stop.now = true;
  stopNew.now = true;
  await Promise.all([...lanes, newLane]);
  assert.deepEqual(unexpected, [], `the old server's answers (${tally.summary()})`);
  assert.deepEqual(unexpectedOnNew, [], `the new server's answers (${onNew.summary()})`);

  // Every write either server acknowledged, read back through the new one.
  const owner = client(session, M.workspaceId);
  let lost = 0;
  for (const s of acked.secret) {
    const res = await owner.call(newServer.url, 'GET', `/v1/secrets/${s.id}:access`);
    if (res.status !== 200 || res.body.data !== s.data) lost++;
  }
  for (const s of acked.snippet) {
    const res = await owner.call(newServer.url, 'GET', `/v1/snippets/${s.id}`);
    if (res.status !== 200 || res.body.name !== s.name) lost++;
  }
  for (const token of acked.revokedTokens) {
    const res = await client(token, M.workspaceId).call(newServer.url, 'GET', '/v1/secrets?limit=1');
    if (res.status !== 401) lost++;
  }
  assert.equal(lost, 0, 'acknowledged writes missing after the upgrade');

  // The old release cannot start again on the upgraded database: its migrator refuses a
  // database that has applied a migration it does not know (kysely's "corrupted migrations"
  // check). A rolling upgrade must therefore never restart an old instance once the new one
  // has started (docs/spec-gaps.md, "Upgrades").
  const stopping = performance.now();
  await oldServer.stop();
  oldServer = undefined;
  t.diagnostic(`upgrade ${ENGINE}: the old server stopped in ${Math.round(performance.now() - stopping)} ms`);
  await assert.rejects(startServer(env, [], [oldBin, 'serve']), /corrupted migrations: previously executed migration 0018_list_versions is missing/);

  t.diagnostic(
    `upgrade ${ENGINE}: the new server started (and migrated) in ${Math.round(upgradeMs)} ms while the old one answered ${during} requests; old server ${tally.summary()}, new server ${onNew.summary()}`,
  );
  reportFault(t, {
    fault: 'rolling upgrade from the previous release',
    injected: `${PREVIOUS_RELEASE.commit.slice(0, 7)} serving its fixture database under ${LANES} lanes; the current wsp serve started on it (migrates 0018), both serve ${AFTER_MS / 1000} s`,
    requests: tally.requests,
    acknowledged: tally.acknowledged,
    lost,
    worstLatencyMs: tally.worstMs,
    recoveryMs: null,
    notes: `old server ${tally.summary()}; ${during} of them during the new one's start and migration (${Math.round(upgradeMs)} ms); new server ${onNew.summary()}; the old release refuses to restart afterwards (corrupted migrations)`,
  });
});

test(`upgrade (${ENGINE}): everything the previous release wrote reads back the same through the current one`, async (t: TestContext) => {
  assert.ok(newServer, 'the rolling upgrade started the new server');
  const base = newServer.url;
  const owner = client(session, M.workspaceId);
  // Pages of 10: the smallest page size of any list (dashboard revisions).
  const all = caller(base, session, M.workspaceId).all;
  const diffs: string[] = [];
  for (const [url, before] of Object.entries(M.snapshots)) {
    const res = await owner.call(base, 'GET', url);
    if (res.status !== 200) diffs.push(`${url}: ${res.status} ${res.text}`);
    else diffs.push(...differences(url, before, res.body).map((d) => `${url} ${d}`));
  }
  for (const [url, ids] of Object.entries(M.lists)) {
    const now = url === '/v1/compute/suspensions' ? await owner.ok(base, 'GET', url) : await all(url);
    const have = new Set((now as any[]).map((x) => x.id ?? x.user_id));
    const expected = listingAt(url, M.madeAt, Date.now());
    for (const id of ids) {
      if (expected === 'listed' && !have.has(id)) diffs.push(`${url}: ${id} is no longer listed`);
      if (expected === 'ended' && have.has(id)) diffs.push(`${url}: ${id} is still listed after its end`);
    }
  }
  assert.deepEqual(diffs, [], 'the upgraded data differs from what the previous release wrote');

  // Payloads decrypt with the fixture's master key.
  for (const p of M.payloads) {
    const got = await owner.ok(base, 'GET', `/v1/secrets/${p.secretId}/versions/${p.versionId}:access`);
    assert.equal(got.data, p.data);
  }
  // Tokens: the live ones authenticate (with their scopes), the revoked one never.
  for (const tok of M.tokens.live) assert.equal((await client(tok.token, M.workspaceId).call(base, 'GET', '/v1/secrets?limit=1')).status, 200);
  for (const tok of M.tokens.revoked) assert.equal((await client(tok.token, M.workspaceId).call(base, 'GET', '/v1/secrets?limit=1')).status, 401);
  // Repositories: the git CLI judges them, and main is where the install says.
  for (const inst of M.installs) {
    const renders = await all(`/v1/installs/${inst.id}/renders`);
    assert.deepEqual(new Set(inst.renders), new Set(renders.map((r) => r.id).filter((id: string) => inst.renders.includes(id))));
    const repo = path.join(fx.dataDir, 'repos', `${inst.id}.git`);
    assert.equal(checkRepository(repo, renders), inst.renders.length);
    const info = await owner.ok(base, 'GET', `/v1/installs/${inst.id}/repository`);
    assert.equal(git(repo, 'rev-parse', 'refs/heads/main'), info.head_commit_sha);
  }
  // The upgraded data takes new writes: a render of a fixture install commits on top of its history.
  const inst = M.installs[0]!;
  const now = await owner.ok(base, 'GET', `/v1/installs/${inst.id}`);
  await owner.ok(base, 'PATCH', `/v1/installs/${inst.id}`, { values: { title: 'Prod after upgrade', replicas: '4' } }, { 'if-match': now.etag });
  const renders = await waitFor('the render after the upgrade', async () => {
    const rs = await all(`/v1/installs/${inst.id}/renders`);
    return rs.length === inst.renders.length + 1 && rs.every((r) => r.state === 'succeeded') ? rs : null;
  });
  assert.equal(checkRepository(path.join(fx.dataDir, 'repos', `${inst.id}.git`), renders), inst.renders.length + 1);
  const dash = await owner.ok(base, 'GET', `/v1/dashboards/${M.dashboards[0]!.id}`);
  await owner.ok(base, 'PATCH', `/v1/dashboards/${dash.id}`, { name: 'Operations (after the upgrade)', summary: 'after the upgrade' }, { 'if-match': dash.etag });
  assert.equal((await all(`/v1/dashboards/${dash.id}/revisions`)).length, M.dashboards[0]!.revisions.length + 1);
  // Migration 0018 works on the upgraded rows: a conditional read of the tokens list is answered 304.
  const listed = await owner.call(base, 'GET', '/v1/api_tokens');
  const etag = listed.headers.get('etag');
  assert.ok(etag, 'the tokens list has an ETag');
  assert.equal((await owner.call(base, 'GET', '/v1/api_tokens', undefined, { 'if-none-match': etag })).status, 304);
  // Migration 0028 (issue 52): the fixture's default cluster is a resource now, holding the
  // fixture's machines; its installs are on no cluster; the default cannot be deleted; new
  // clusters and machines placed on them work on the upgraded rows.
  const machines = await all('/v1/machines');
  const fixtureMachines = machines.filter((m) => Object.keys(M.snapshots).includes(`/v1/machines/${m.id}`));
  assert.ok(fixtureMachines.length > 0, 'the fixture has machines');
  const defaultId = fixtureMachines[0].cluster_id;
  assert.ok(fixtureMachines.every((m) => m.cluster_id === defaultId));
  const dflt = await owner.ok(base, 'GET', `/v1/clusters/${defaultId}`);
  assert.deepEqual([dflt.name, dflt.is_default, dflt.region, dflt.description], ['default', true, null, null]);
  assert.equal(dflt.machine_counts.total, machines.filter((m) => m.cluster_id === defaultId).length);
  assert.ok(dflt.etag.length > 0);
  assert.equal(dflt.updated_at, dflt.created_at, 'updated_at starts at created_at');
  assert.deepEqual(
    (await all('/v1/clusters')).map((c) => c.id),
    [defaultId],
  );
  assert.equal((await owner.call(base, 'DELETE', `/v1/clusters/${defaultId}`, undefined, { 'if-match': dflt.etag })).body.errors[0].code, 7411);
  for (const i of await all('/v1/installs')) assert.equal(i.cluster_id, null);
  const made = await owner.ok(base, 'POST', '/v1/clusters', { name: 'after-upgrade', region: 'fsn1' });
  await owner.ok(base, 'PATCH', `/v1/installs/${inst.id}`, { cluster_id: made.id }, { 'if-match': (await owner.ok(base, 'GET', `/v1/installs/${inst.id}`)).etag });
  assert.deepEqual(
    (await all(`/v1/installs?cluster_id=${made.id}`)).map((i) => i.id),
    [inst.id],
  );
  t.diagnostic(
    `upgrade ${ENGINE}: ${Object.keys(M.snapshots).length} resources compared field by field, ${Object.values(M.lists).flat().length} listed ids, ${M.payloads.length} payloads, ${M.tokens.live.length + M.tokens.revoked.length} tokens, ${M.installs.length} repositories checked; the fixture was made by ${M.commit.slice(0, 7)} on ${M.madeAt}`,
  );
});
