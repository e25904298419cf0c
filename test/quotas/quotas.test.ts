import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTestApp, as, firstError, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from '../installs/fixture.js';
import { loadConfig } from '../../src/config.js';

const QUOTAS = { renderOutputBytes: 40_000, repositoryBytes: 96 * 1024, rendersPerHour: 4, apiTokens: 3, webhooks: 2, workspaceRepositoryBytes: 10 * 1024 * 1024, workspacesPerUser: 3 };

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  config: { quotas: QUOTAS },
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

/** A fresh workspace of the same app: each test counts its own quota from zero. */
async function workspace() {
  const seed = await h.seed(`ws-${randomBytes(3).toString('hex')}`);
  return { seed, f: installFixture(h, seed) };
}

const quotasOf = async (seed: Seed) => {
  const res = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${seed.workspaceId}/quotas`, headers: as(seed.member.session, seed.workspaceId) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};

describe('renders per hour (WSP_QUOTA_RENDERS_PER_HOUR)', () => {
  test('over the quota, creating or updating an install is 429 (7040) with Retry-After and changes nothing; an hour later it goes', async () => {
    const { seed, f } = await workspace();
    const { install, v2 } = await f.installed(); // 1
    await f.patch(install.id, { values: { who: 'a' } }); // 2
    await f.patch(install.id, { values: { who: 'b' } }); // 3
    h.clock.advanceSeconds(600);
    await f.patch(install.id, { values: { who: 'c' } }); // 4
    const before = await f.getInstall(install.id);

    const refused = await f.call('PATCH', `/v1/installs/${install.id}`, { desired_version_id: v2.id }, { 'if-match': before.etag });
    assert.equal(refused.statusCode, 429, refused.body);
    const err = firstError(refused.json());
    assert.equal(err.code, 7040);
    assert.deepEqual(err.metadata, { quota: 'renders_per_hour', limit: '4', used: '4' });
    assert.match(err.message, /4 renders in the last hour; its quota is 4 an hour/);
    assert.equal(refused.headers['retry-after'], '3000', 'the oldest of the hour frees its place 3,000 s from now');
    assert.deepEqual(await f.getInstall(install.id), before, 'nothing changed');
    assert.equal((await f.renders(install.id)).length, 4);

    const pkg = await f.createPackage();
    const v = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'a' });
    const name = f.unique('refused');
    const create = await f.call('POST', '/v1/installs', { name, package_id: pkg.id, version_id: v.id });
    assert.equal(create.statusCode, 429);
    assert.equal(firstError(create.json()).code, 7040);
    const listed = await f.ok('GET', '/v1/installs?limit=100');
    assert.ok(!listed.data.some((i: { name: string }) => i.name === name), 'no install was made');

    assert.deepEqual((await quotasOf(seed)).renders_per_hour, { limit: 4, used: 4 });
    h.clock.advanceSeconds(3000);
    assert.deepEqual((await quotasOf(seed)).renders_per_hour, { limit: 4, used: 1 }, 'the three of the first minute are an hour old');
    const moved = await f.patch(install.id, { desired_version_id: v2.id });
    assert.equal(moved.desired_version.id, v2.id);
  });

  test('the quota is per workspace: another workspace renders on', async () => {
    const a = await workspace();
    const { install } = await a.f.installed();
    for (const who of ['x', 'y', 'z']) await a.f.patch(install.id, { values: { who } });
    const b = await workspace();
    await b.f.installed();
    assert.equal((await quotasOf(b.seed)).renders_per_hour.used, 1);
  });

  test('restores render nothing and are not counted', async () => {
    const { seed, f } = await workspace();
    const { install } = await f.installed();
    await h.app.jobs.runDue();
    const [first] = await f.renders(install.id);
    await f.patch(install.id, { values: { who: 'moon' } });
    await h.app.jobs.runDue();
    const res = await f.restore(install.id, first.id, (await f.getInstall(install.id)).etag);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await quotasOf(seed)).renders_per_hour.used, 2);
  });

  test('an automatic update over the quota waits for a free place, then moves the install', async () => {
    const { f } = await workspace();
    const { install, pkg } = await f.installed();
    await f.patch(install.id, { automatic_updates_enabled: true, values: { who: 'a' } });
    await f.patch(install.id, { values: { who: 'b' } });
    await f.patch(install.id, { values: { who: 'c' } });
    await h.app.jobs.runDue();
    const v3 = await f.publish(pkg.id, '3.0.0', { 'hello.txt': 'v3 {{who}}' });
    await h.app.jobs.runDue();
    assert.notEqual((await f.getInstall(install.id)).desired_version.id, v3.id, 'no place this hour');
    h.clock.advanceSeconds(3601);
    await h.app.jobs.runDue();
    assert.equal((await f.getInstall(install.id)).desired_version.id, v3.id);
    await h.app.jobs.runDue();
    assert.equal((await f.renders(install.id))[0].state, 'succeeded');
  });
});

describe('API tokens (WSP_QUOTA_API_TOKENS)', () => {
  test('at the quota, creating a token is 409 (7041); expired and revoked tokens free their place', async () => {
    const { seed } = await workspace();
    const create = (body: Record<string, unknown>) => h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(seed.owner.session, seed.workspaceId), payload: { name: 't', ...body } });
    // The seed holds one.
    const soon = (await create({ expires_at: Math.floor(h.clock.nowMs() / 1000) + 60 })).json();
    const second = (await create({})).json();
    const refused = await create({});
    assert.equal(refused.statusCode, 409, refused.body);
    const err = firstError(refused.json());
    assert.equal(err.code, 7041);
    assert.deepEqual(err.metadata, { quota: 'api_tokens', limit: '3', used: '3' });
    assert.deepEqual((await quotasOf(seed)).api_tokens, { limit: 3, used: 3 });

    h.clock.advanceSeconds(61);
    assert.equal((await quotasOf(seed)).api_tokens.used, 2, 'an expired token no longer counts');
    const third = await create({});
    assert.equal(third.statusCode, 201);
    assert.equal((await create({})).statusCode, 409);
    const revoked = await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${second.id}`, headers: as(seed.owner.session, seed.workspaceId) });
    assert.equal(revoked.statusCode, 204);
    assert.equal((await create({})).statusCode, 201);
    assert.ok(soon.id);
  });
});

describe('quotas under concurrent creates', () => {
  test('12 API tokens created at once against a quota of 3 (one held): exactly 2 created, 10 × 409 7041, never more than the quota', async () => {
    const { seed } = await workspace();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(seed.owner.session, seed.workspaceId), payload: { name: `race-${i}` } })),
    );
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [201, 201, ...Array(10).fill(409)], answers.map((r) => r.body).join('\n'));
    assert.ok(answers.filter((r) => r.statusCode === 409).every((r) => firstError(r.json()).code === 7041));
    assert.deepEqual((await quotasOf(seed)).api_tokens, { limit: 3, used: 3 });
  });

  test('10 installs created at once against a quota of 4 renders an hour: exactly 4 created, 6 × 429 7040', async () => {
    const { seed, f } = await workspace();
    const pkg = await f.createPackage();
    const v = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'a' });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => f.call('POST', '/v1/installs', { name: f.unique(`race-${i}`), package_id: pkg.id, version_id: v.id })));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 201, 201, 201, ...Array(6).fill(429)], answers.map((r) => r.body).join('\n'));
    assert.ok(answers.filter((r) => r.statusCode === 429).every((r) => firstError(r.json()).code === 7040));
    assert.deepEqual((await quotasOf(seed)).renders_per_hour, { limit: 4, used: 4 });
  });
});

describe('workspaces per user (WSP_WORKSPACES_PER_USER, issue 48.7)', () => {
  test('12 workspaces created at once by one user against a limit of 3: exactly 3 made, 9 × 409 7065 with the limit; handing one over frees a place', async () => {
    const { user_id } = await h.admin.createUser({ name: 'maker' });
    const { session_token: session } = await h.admin.createSession(user_id);
    const create = (name: string) => h.app.inject({ method: 'POST', url: '/v1/workspaces', headers: as(session), payload: { name } });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => create(`made-${i}`)));
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 201, 201, ...Array(9).fill(409)], answers.map((r) => r.body).join('\n'));
    for (const refused of answers.filter((r) => r.statusCode === 409)) {
      const err = firstError(refused.json());
      assert.equal(err.code, 7065);
      assert.deepEqual(err.metadata, { quota: 'workspaces_per_user', limit: '3', used: '3' });
      assert.match(err.message, /You own 3 workspaces, as many as one user may \(3\)/);
    }
    const owned = await h.database.db.selectFrom('memberships').select('workspace_id').where('user_id', '=', user_id).where('role', '=', 'owner').execute();
    assert.equal(owned.length, 3, 'never more than the limit');
    const made = answers.filter((r) => r.statusCode === 201).map((r) => r.json().id as string);
    const figures = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${made[0]}/quotas`, headers: as(session, made[0]) });
    assert.deepEqual(figures.json().workspaces_per_user, { limit: 3, used: 3 });

    // Being a member (not an owner) of other workspaces does not count; handing one over frees a place.
    const other = await h.seed(`other-${randomBytes(3).toString('hex')}`);
    await h.admin.addMember(other.workspaceId, user_id, 'member');
    await h.admin.addMember(made[0]!, other.owner.userId, 'owner');
    const stepDown = await h.app.inject({ method: 'PATCH', url: `/v1/workspaces/${made[0]}/members/${user_id}`, headers: as(session, made[0]), payload: { role: 'admin' } });
    assert.equal(stepDown.statusCode, 200, stepDown.body);
    assert.equal((await create('after handing one over')).statusCode, 201);
    assert.equal(firstError((await create('one too many')).json()).code, 7065);
  });
});

describe('repositories of a workspace together (WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES, issue 48.7)', () => {
  test('of two installs rendering at once, each under its own quota but not both under the total, one lands and the other fails; once they take it all, installs are 409 (7066); the figure shows them', async () => {
    const TOTAL = 128 * 1024;
    const h2 = await createTestApp({ config: { quotas: { ...QUOTAS, renderOutputBytes: 100_000, rendersPerHour: 600, workspaceRepositoryBytes: TOTAL } } });
    try {
      const seed = await h2.seed();
      const f2 = installFixture(h2, seed);
      const quotas = async () => (await h2.app.inject({ method: 'GET', url: `/v1/workspaces/${seed.workspaceId}/quotas`, headers: as(seed.member.session, seed.workspaceId) })).json();
      const pkg = await f2.createPackage();
      // Random text does not compress much: each install's repository takes about its size
      // plus an empty repository's (some 75 KB), under the per-install quota (96 KiB); two pass 128 KiB.
      const v = await f2.publish(pkg.id, '1.0.0', { 'data.txt': '{{{blob}}}' });
      const blob = () => randomBytes(45_000).toString('base64');
      const installs = [
        await f2.createInstall({ package_id: pkg.id, version_id: v.id, values: { blob: blob() } }),
        await f2.createInstall({ package_id: pkg.id, version_id: v.id, values: { blob: blob() } }),
      ];
      await h2.app.jobs.runDue(); // the two renders run in two of the runner's slots at once
      const renders = await Promise.all(installs.map(async (i) => (await f2.renders(i.id))[0]));
      assert.deepEqual(renders.map((r) => r.state).sort(), ['failed', 'succeeded'], JSON.stringify(renders.map((r) => [r.state, r.message])));
      const landed = (await quotas()).workspace_repository_bytes;
      assert.equal(landed.limit, TOTAL);
      assert.ok(landed.used > 0 && landed.used < TOTAL, JSON.stringify(landed));
      const failed = renders.find((r) => r.state === 'failed')!;
      const m = /^the workspace's repositories would take (\d+) bytes together, more than its quota of 131072 bytes$/.exec(failed.message);
      assert.ok(m, failed.message);
      const ownBytes = Number(m[1]) - landed.used;
      assert.ok(ownBytes > 0 && ownBytes < QUOTAS.repositoryBytes, `the install's own repository (${ownBytes} bytes) is under its own quota`);
      const op = (await h2.app.inject({ method: 'GET', url: `/v1/operations/${failed.operation_id}`, headers: as(seed.apiToken) })).json();
      assert.equal(op.error?.code, 7310, JSON.stringify(op));
      assert.equal(failed.commit_sha, null, 'nothing committed');
      const a = installs.find((i) => i.id !== failed.install_id)!;

      // Repository maintenance measures what the failed render left (pruned only once an hour
      // old): now the repositories take the whole quota, and nothing may queue a render.
      h2.clock.advanceSeconds(24 * 3600);
      await h2.app.jobs.runDue();
      const full = (await quotas()).workspace_repository_bytes;
      assert.ok(full.used >= TOTAL, JSON.stringify(full));
      const refused = await f2.call('POST', '/v1/installs', { name: f2.unique('refused'), package_id: pkg.id, version_id: v.id });
      assert.equal(refused.statusCode, 409, refused.body);
      const err = firstError(refused.json());
      assert.equal(err.code, 7066);
      assert.deepEqual(err.metadata, { quota: 'workspace_repository_bytes', limit: String(TOTAL), used: String(full.used) });
      const before = await f2.getInstall(a.id);
      const patched = await f2.call('PATCH', `/v1/installs/${a.id}`, { values: { blob: 'small' } }, { 'if-match': before.etag });
      assert.equal(patched.statusCode, 409, patched.body);
      assert.equal(firstError(patched.json()).code, 7066);
      assert.deepEqual(await f2.getInstall(a.id), before, 'nothing changed');
    } finally {
      await h2.close();
    }
  });
});

describe('render output and repository size', () => {
  test('a render whose files pass WSP_QUOTA_RENDER_OUTPUT_BYTES fails saying so; nothing is committed', async () => {
    const { f } = await workspace();
    const pkg = await f.createPackage();
    const v = await f.publish(pkg.id, '1.0.0', { 'a.txt': '{{#xs}}{{x}}{{/xs}}', 'b.txt': 'small' });
    const xs = Array.from({ length: 10 }, (_, i) => i);
    // 20,010 characters, 40,020 bytes: the quota counts bytes.
    const install = await f.createInstall({ package_id: pkg.id, version_id: v.id, values: { x: 'é'.repeat(2001), xs } });
    await h.app.jobs.runDue();
    const [render] = await f.renders(install.id);
    assert.equal(render.state, 'failed');
    assert.equal(render.message, "a.txt: the rendered files are larger than the workspace's quota of 40000 bytes per render");
    const op = await f.ok('GET', `/v1/operations/${render.operation_id}`);
    assert.equal(op.error.code, 7310);
    assert.equal(f.git(install.id, 'for-each-ref'), '');
    const smaller = await f.createInstall({ package_id: pkg.id, version_id: v.id, values: { x: 'é'.repeat(1999), xs } });
    await h.app.jobs.runDue();
    assert.equal((await f.renders(smaller.id))[0].state, 'succeeded');
  });

  test("a render that would grow the install's repository past WSP_QUOTA_REPOSITORY_BYTES fails; the figure shows the largest repository", async () => {
    const { seed, f } = await workspace();
    const pkg = await f.createPackage();
    // Random text does not compress: each render adds about its size to the repository.
    const v = await f.publish(pkg.id, '1.0.0', { 'data.txt': '{{{blob}}}' });
    const blob = () => randomBytes(15_000).toString('base64');
    const install = await f.createInstall({ package_id: pkg.id, version_id: v.id, values: { blob: blob() } });
    await h.app.jobs.runDue();
    assert.equal((await f.renders(install.id))[0].state, 'succeeded');
    const first = await quotasOf(seed);
    assert.equal(first.repository_bytes.install_id, install.id);
    assert.ok(first.repository_bytes.used > 0 && first.repository_bytes.used < QUOTAS.repositoryBytes, String(first.repository_bytes.used));

    let failed: { state: string; message: string } | undefined;
    for (let i = 0; i < 200 && !failed; i++) {
      await f.patch(install.id, { values: { blob: blob() } });
      await h.app.jobs.runDue();
      h.clock.advanceSeconds(3600); // past the renders-per-hour quota of this app
      const [latest] = await f.renders(install.id);
      if (latest.state === 'failed') failed = latest;
      else assert.equal(latest.state, 'succeeded');
    }
    assert.ok(failed, 'the repository reached its quota');
    assert.match(failed.message, /^the install's repository would take \d+ bytes, more than the workspace's quota of 98304 bytes per install$/);
    const figures = await quotasOf(seed);
    assert.ok(figures.repository_bytes.used <= QUOTAS.repositoryBytes && figures.repository_bytes.used > first.repository_bytes.used);
  });
});

describe('GET /v1/workspaces/{id}/quotas', () => {
  test('every figure, for any member; another workspace is 404', async () => {
    const { seed } = await workspace();
    assert.deepEqual(await quotasOf(seed), {
      renders_per_hour: { limit: 4, used: 0 },
      api_tokens: { limit: 3, used: 1 },
      webhooks: { limit: 2, used: 0 },
      render_output_bytes: { limit: 40000 },
      repository_bytes: { limit: 98304, used: 0, install_id: null },
      workspace_repository_bytes: { limit: 10 * 1024 * 1024, used: 0 },
      workspaces_per_user: { limit: 3, used: 0 },
    });
    const foreign = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}/quotas`, headers: as(seed.owner.session, seed.workspaceId) });
    assert.equal(foreign.statusCode, 404);
    const token = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${seed.workspaceId}/quotas`, headers: as(seed.apiToken) });
    assert.equal(token.statusCode, 200);
    assert.deepEqual(token.json().workspaces_per_user, { limit: 3, used: null }, 'an API token owns no workspace');
    const owner = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${seed.workspaceId}/quotas`, headers: as(seed.owner.session, seed.workspaceId) });
    assert.deepEqual(owner.json().workspaces_per_user, { limit: 3, used: 1 }, "the caller's own count");
  });

  test('the defaults an operator starts with, and the variables that change them', () => {
    assert.deepEqual(loadConfig({}).quotas, {
      renderOutputBytes: 8 * 1024 * 1024,
      repositoryBytes: 256 * 1024 * 1024,
      rendersPerHour: 600,
      apiTokens: 100,
      webhooks: 20,
      workspaceRepositoryBytes: 2 * 1024 * 1024 * 1024,
      workspacesPerUser: 10,
    });
    const set = loadConfig({
      WSP_QUOTA_RENDER_OUTPUT_BYTES: '1000',
      WSP_QUOTA_REPOSITORY_BYTES: '2000',
      WSP_QUOTA_RENDERS_PER_HOUR: '3',
      WSP_QUOTA_API_TOKENS: '4',
      WSP_QUOTA_WEBHOOKS: '5',
      WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES: '6000',
      WSP_WORKSPACES_PER_USER: '7',
    });
    assert.deepEqual(set.quotas, { renderOutputBytes: 1000, repositoryBytes: 2000, rendersPerHour: 3, apiTokens: 4, webhooks: 5, workspaceRepositoryBytes: 6000, workspacesPerUser: 7 });
    assert.throws(() => loadConfig({ WSP_QUOTA_API_TOKENS: '0' }), /WSP_QUOTA_API_TOKENS must be at least 1/);
    assert.throws(() => loadConfig({ WSP_WORKSPACES_PER_USER: '0' }), /WSP_WORKSPACES_PER_USER must be at least 1/);
    assert.throws(() => loadConfig({ WSP_QUOTA_RENDER_OUTPUT_BYTES: String(64 * 1024 * 1024) }), /WSP_RENDER_MEMORY_MB must be at least 512 with WSP_QUOTA_RENDER_OUTPUT_BYTES=67108864/);
    assert.equal(loadConfig({ WSP_QUOTA_RENDER_OUTPUT_BYTES: String(64 * 1024 * 1024), WSP_RENDER_MEMORY_MB: '512' }).renders.memoryMb, 512);
  });
});

describe('repository maintenance (WSP_REPOSITORY_GC_HOURS)', () => {
  test('packs each repository, deletes objects nothing references once an hour old, keeps the rest, and measures it', async () => {
    const { install } = await f.installed();
    await h.app.jobs.runDue();
    const [render] = await f.renders(install.id);
    const repo = f.repoPath(install.id);
    const tmp = path.join(h.config.dataDir, 'loose.txt');
    fs.writeFileSync(tmp, `old ${randomBytes(8).toString('hex')}`);
    const old = f.git(install.id, 'hash-object', '-w', tmp);
    fs.writeFileSync(tmp, `new ${randomBytes(8).toString('hex')}`);
    const fresh = f.git(install.id, 'hash-object', '-w', tmp);
    const loose = (sha: string) => path.join(repo, 'objects', sha.slice(0, 2), sha.slice(2));
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    fs.utimesSync(loose(old), twoHoursAgo, twoHoursAgo);

    h.clock.advanceSeconds(24 * 3600);
    await h.app.jobs.runDue();
    assert.throws(() => f.git(install.id, 'cat-file', '-e', old), 'the old unreferenced object is pruned');
    assert.doesNotThrow(() => f.git(install.id, 'cat-file', '-e', fresh), 'a young one is kept: a render may be about to name it');
    assert.equal(f.git(install.id, 'rev-parse', 'main'), render.commit_sha);
    assert.doesNotThrow(() => f.git(install.id, 'fsck', '--no-dangling'));
    assert.ok(
      fs.readdirSync(path.join(repo, 'objects', 'pack')).some((n) => n.endsWith('.pack')),
      'packed',
    );
    const row = await h.database.db.selectFrom('installs').select('repository_bytes').where('id', '=', install.id).executeTakeFirstOrThrow();
    assert.ok(Number(row.repository_bytes) > 0);
  });
});
