import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../src/config.js';
import { runWsp } from '../helpers/processes.js';

/** With no WSP_PROVIDER_URL the embedded simulated provider serves the whole compute flow offline. */
const h = useTestApp({ config: { suspensionRetentionDays: 3, schedulerIntervalSeconds: 600, provider: { ...loadConfig({}).provider, id: 'acme' } } });
const s = h.seeded;

const inject = (method: 'GET' | 'POST', url: string, payload?: object, extra: Record<string, string> = {}) =>
  h.app.inject({ method, url, headers: as(s.apiToken, undefined, extra), ...(payload ? { payload } : {}) });

describe('the embedded simulated provider', () => {
  test('offers the catalog of docs/spec-gaps.md, Compute: cx22, cx32, cpx11, cax11 in fsn1, nbg1, hel1; ubuntu-24.04 and debian-12', async () => {
    const bad = await inject('POST', '/v1/compute/configs', { name: 'x', provider: 'acme', region: 'ash', image: 'centos-7', machine_type_filter: 'ccx*' });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(
      bad.json().errors.map((e: { path: string[] }) => e.path),
      [
        ['body', 'region'],
        ['body', 'image'],
        ['body', 'machine_type_filter'],
      ],
    );
    assert.match(bad.json().errors[0].message, /fsn1, nbg1, hel1$/);
    for (const region of ['fsn1', 'nbg1', 'hel1']) {
      for (const image of ['ubuntu-24.04', 'debian-12']) {
        assert.equal((await inject('POST', '/v1/compute/configs', { name: 'ok', provider: 'acme', region, image })).statusCode, 201);
      }
    }
  });

  test('GET /v1/compute/catalog shows that catalog, named by WSP_PROVIDER_ID', async () => {
    const res = await inject('GET', '/v1/compute/catalog');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.provider, 'acme');
    assert.deepEqual(body.regions, [
      { id: 'fsn1', name: 'Falkenstein DC Park 1' },
      { id: 'nbg1', name: 'Nuremberg DC Park 1' },
      { id: 'hel1', name: 'Helsinki DC Park 1' },
    ]);
    assert.deepEqual(body.images, [
      { id: 'ubuntu-24.04', name: 'Ubuntu 24.04' },
      { id: 'debian-12', name: 'Debian 12' },
    ]);
    assert.deepEqual(
      body.server_types.map((s: { id: string; monthly_price_cents: number; architecture: string }) => [s.id, s.monthly_price_cents, s.architecture]),
      [
        ['cx22', 459, 'x86'],
        ['cx32', 759, 'x86'],
        ['cpx11', 518, 'x86'],
        ['cax11', 459, 'arm'],
      ],
    );
  });

  test('WSP_PROVIDER_ID renames the provider: the one allowed value of `provider`', async () => {
    const res = await inject('POST', '/v1/compute/configs', { name: 'x', provider: 'hetzner', region: 'fsn1', image: 'debian-12' });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['body', 'provider']);
    const id = (await inject('POST', '/v1/compute/configs', { name: 'x', provider: 'acme', region: 'fsn1', image: 'debian-12' })).json().id;
    assert.equal((await inject('GET', `/v1/compute/configs/${id}`)).json().provider, 'acme');
  });

  test('create, suspend (retention from WSP_SUSPENSION_RETENTION_DAYS) and resume a machine', async () => {
    const configId = (await inject('POST', '/v1/compute/configs', { name: 'x', provider: 'acme', region: 'nbg1', image: 'debian-12', machine_type_filter: 'c?x11' })).json().id;
    const created = await inject('POST', '/v1/machines', { compute_config_id: configId, server_type: 'cax11' });
    assert.equal(created.statusCode, 201);
    await h.app.jobs.runDue();
    const m = (await inject('GET', `/v1/machines/${created.json().id}`)).json();
    assert.equal(m.status, 'running');
    assert.equal(typeof m.provider_server_id, 'number');
    assert.equal((await inject('POST', `/v1/machines/${m.id}:suspend`, undefined, { 'if-match': m.etag })).statusCode, 200);
    await h.app.jobs.runDue();
    const [susp] = (await inject('GET', '/v1/compute/suspensions')).json();
    const now = Math.floor(h.clock.nowMs() / 1000);
    assert.equal(susp.expires_at, now + 3 * 86_400);
    assert.equal(susp.location, 'nbg1');
    assert.deepEqual(susp.provider_suspend_data, { provider: 'acme', snapshot_id: susp.provider_suspend_data.snapshot_id, size_gb: 2 });
    assert.equal(susp.monthly_cost_cents, 2.38);
    assert.equal((await inject('POST', `/v1/compute/suspensions/${susp.id}:resume`)).statusCode, 200);
    await h.app.jobs.runDue();
    assert.equal((await inject('GET', `/v1/machines/${m.id}`)).json().status, 'running');
    assert.deepEqual((await inject('GET', '/v1/compute/suspensions')).json(), []);
  });

  test('the expiry scan runs once every WSP_SCHEDULER_INTERVAL_SECONDS', async () => {
    const scans = async () => (await h.database.db.selectFrom('jobs').select('id').where('kind', '=', 'compute.expiry_scan').execute()).length;
    h.clock.set(Math.ceil(h.clock.nowMs() / 600_000) * 600_000);
    await h.app.jobs.runDue();
    const first = await scans();
    h.clock.advanceSeconds(599);
    await h.app.jobs.runDue();
    assert.equal(await scans(), first);
    h.clock.advanceSeconds(1);
    await h.app.jobs.runDue();
    assert.equal(await scans(), first + 1);
  });
});

describe('compute settings', () => {
  test('read from the environment with their defaults; bad values stop the start', () => {
    const d = loadConfig({});
    assert.deepEqual(d.provider, { id: 'hetzner', url: undefined, token: undefined, timeoutMs: 10_000, actionPollMs: 1000 });
    assert.equal(d.suspensionRetentionDays, 30);
    assert.equal(d.schedulerIntervalSeconds, 60);
    const c = loadConfig({
      WSP_PROVIDER_ID: 'acme',
      WSP_PROVIDER_URL: 'https://api.hetzner.cloud/v1',
      WSP_PROVIDER_TOKEN: 'secret',
      WSP_PROVIDER_TIMEOUT_SECONDS: '5',
      WSP_SUSPENSION_RETENTION_DAYS: '14',
      WSP_SCHEDULER_INTERVAL_SECONDS: '30',
    });
    assert.deepEqual(c.provider, { id: 'acme', url: 'https://api.hetzner.cloud/v1', token: 'secret', timeoutMs: 5000, actionPollMs: 1000 });
    assert.equal(c.suspensionRetentionDays, 14);
    assert.equal(c.schedulerIntervalSeconds, 30);
    for (const env of [{ WSP_PROVIDER_ID: 'Bad Id' }, { WSP_PROVIDER_URL: 'ftp://x' }, { WSP_SUSPENSION_RETENTION_DAYS: '0' }, { WSP_SCHEDULER_INTERVAL_SECONDS: 'soon' }]) {
      assert.throws(() => loadConfig(env), ConfigError, JSON.stringify(env));
    }
  });

  test('WSP_PROVIDER_URL without WSP_PROVIDER_TOKEN stops the start with a clear message (no empty bearer is ever sent)', async () => {
    for (const token of [undefined, '', '   ']) {
      const env = { WSP_PROVIDER_URL: 'https://api.hetzner.cloud/v1', ...(token === undefined ? {} : { WSP_PROVIDER_TOKEN: token }) };
      assert.throws(
        () => loadConfig(env),
        (err: Error) => err instanceof ConfigError && /WSP_PROVIDER_URL needs WSP_PROVIDER_TOKEN/.test(err.message),
        JSON.stringify(env),
      );
    }
    assert.equal(loadConfig({ WSP_PROVIDER_TOKEN: 'unused' }).provider.url, undefined, 'a token alone is harmless: the simulation runs');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-provider-'));
    try {
      const res = await runWsp(['serve'], { WSP_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', WSP_PROVIDER_URL: 'http://127.0.0.1:9/v1' });
      assert.equal(res.code, 1, res.stdout + res.stderr);
      assert.match(res.stderr, /WSP_PROVIDER_URL needs WSP_PROVIDER_TOKEN/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
