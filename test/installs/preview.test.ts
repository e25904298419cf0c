import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';
import { MAX_RENDER_STEPS } from '../../src/installs/packages/templates.js';
import { loadConfig } from '../../src/config.js';

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  config: { quotas: { ...loadConfig({}).quotas, renderOutputBytes: 1000 } },
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

const preview = (pkgId: string, versionId: string, values?: unknown, credential = s.member.session, workspace: string | undefined = s.workspaceId) =>
  h.app.inject({ method: 'POST', url: `/v1/packages/${pkgId}/versions/${versionId}:preview`, headers: as(credential, workspace), payload: values === undefined ? {} : { values } });

const count = async (table: 'renders' | 'installs') =>
  Number(
    (
      await h.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /v1/packages/{id}/versions/{vid}:preview', () => {
  test('answers the rendered files and writes nothing: no install, no render', async () => {
    const pkg = await f.createPackage();
    const v = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'Hello {{who}} é', 'conf/b.yaml': '{{#items}}- {{.}}\n{{/items}}' });
    const [installs, renders] = [await count('installs'), await count('renders')];
    const res = await preview(pkg.id, v.id, { who: 'you', items: ['x', 'y'] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { files: { 'a.txt': 'Hello you é', 'conf/b.yaml': '- x\n- y\n' } });
    assert.deepEqual([await count('installs'), await count('renders')], [installs, renders]);
  });

  test('a missing value is 422 (7310) naming the file and the value; the template bomb ends on the step limit; the output quota holds', async () => {
    const pkg = await f.createPackage();
    const v = await f.publish(pkg.id, '1.0.0', { 'config.yaml': 'replicas: {{replicas}}' });
    const missing = await preview(pkg.id, v.id);
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(firstError(missing.json()), { code: 7310, message: 'config.yaml: no value for {{replicas}}', path: ['body', 'values'] });
    const two = await f.publish(pkg.id, '1.1.0', { 'config.yaml': 'replicas: {{replicas}}\nimage: {{image}}', 'other.txt': '{{region}}' });
    assert.deepEqual(firstError((await preview(pkg.id, two.id)).json()), {
      code: 7310,
      message: 'config.yaml: no value for {{replicas}}, {{image}}; other.txt: no value for {{region}}',
      path: ['body', 'values'],
    });

    const bomb = await f.publish(pkg.id, '2.0.0', { 'x.txt': '{{#a}}{{#a}}{{#a}}{{#a}}{{x}}{{/a}}{{/a}}{{/a}}{{/a}}' });
    const started = Date.now();
    const res = await preview(pkg.id, bomb.id, { a: Array.from({ length: 60 }, (_, i) => i), x: '' });
    assert.equal(res.statusCode, 422);
    assert.equal(firstError(res.json()).message, `x.txt: the render takes more than ${MAX_RENDER_STEPS} steps (sections over long lists)`);
    assert.ok(Date.now() - started < 10_000);

    const big = await f.publish(pkg.id, '3.0.0', { 'big.txt': '{{#xs}}{{x}}{{/xs}}' });
    const over = await preview(pkg.id, big.id, { x: 'x'.repeat(100), xs: Array.from({ length: 11 }, (_, i) => i) });
    assert.equal(over.statusCode, 422);
    assert.match(firstError(over.json()).message, /quota of 1000 bytes per render/);
  });

  test("another workspace's package, an unknown version or one of another package: 404", async () => {
    const pkg = await f.createPackage();
    const v = await f.publish(pkg.id, '1.0.0', { 'a.txt': 'a' });
    const other = await f.createPackage();
    const elsewhere = await h.seed('Elsewhere');
    assert.equal((await preview(pkg.id, v.id, {}, elsewhere.owner.session, elsewhere.workspaceId)).statusCode, 404);
    assert.equal((await preview(other.id, v.id)).statusCode, 404);
    assert.equal((await preview(pkg.id, 'pkgv_01hzzzzzzzzzzzzzzzzzzzzzzz')).statusCode, 404);
    const bad = await h.app.inject({ method: 'POST', url: `/v1/packages/${pkg.id}/versions/${v.id}:preview`, headers: as(s.member.session, s.workspaceId), payload: { values: [] } });
    assert.equal(bad.statusCode, 422);
  });
});

describe('last_render on the install', () => {
  test('queued at creation, then succeeded (error null); a failing render shows its error; a PATCH shows the new render', async () => {
    const { install, v2 } = await f.installed();
    assert.equal(install.last_render.state, 'queued');
    assert.equal(install.last_render.error, null);
    const [first] = await f.renders(install.id);
    assert.equal(install.last_render.id, first.id);
    await h.app.jobs.runDue();
    assert.deepEqual((await f.getInstall(install.id)).last_render, { id: first.id, state: 'succeeded', error: null });

    const patched = await f.patch(install.id, { desired_version_id: v2.id, values: {} });
    assert.equal(patched.last_render.state, 'queued');
    assert.notEqual(patched.last_render.id, first.id);
    await h.app.jobs.runDue();
    const failed = (await f.getInstall(install.id)).last_render;
    assert.equal(failed.state, 'failed');
    assert.equal(failed.error, 'conf/app.yaml: no value for {{who}}; hello.txt: no value for {{who}}');
    const listed = (await f.ok('GET', '/v1/installs?limit=100')).data.find((i: { id: string }) => i.id === install.id);
    assert.deepEqual(listed.last_render, failed);
  });
});
