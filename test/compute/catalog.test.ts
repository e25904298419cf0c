import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { CATALOG_TTL_SECONDS } from '../../src/compute/catalog.js';
import { useComputeTestApp, CONFIG_BODY, createConfig } from './setup.js';

/** docs/spec-gaps.md, "Lifecycles": GET /v1/compute/catalog from the provider (the HTTP adapter against the stub of its API), kept briefly. */
const t = useComputeTestApp();

const catalog = (credential = t.s.apiToken) => t.h.app.inject({ method: 'GET', url: '/v1/compute/catalog', headers: as(credential) });
const providerCalls = () => t.stub.requestsTo('GET', /^\/(locations|server_types|images)$/).length;

describe('GET /v1/compute/catalog', () => {
  test("the provider's regions, images and server types (deprecated ones left out) with their prices in cents", async () => {
    t.h.clock.advanceSeconds(CATALOG_TTL_SECONDS + 1);
    const res = await t.h.app.inject({ method: 'GET', url: '/v1/compute/catalog', headers: as(t.s.member.session, t.s.workspaceId) });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.provider, 'hetzner');
    assert.deepEqual(body.regions[0], { id: 'fsn1', name: 'FSN1 DC Park 1' });
    assert.deepEqual(
      body.regions.map((r: { id: string }) => r.id),
      ['fsn1', 'nbg1', 'hel1', 'ash'],
    );
    assert.deepEqual(
      body.images,
      ['ubuntu-24.04', 'debian-12', 'ubuntu-22.04'].map((id) => ({ id, name: id })),
    );
    assert.deepEqual(
      body.server_types.map((s: { id: string }) => s.id),
      ['cx22', 'cx32', 'cpx11', 'cpx21', 'cax11'],
    );
    assert.deepEqual(body.server_types[1], {
      id: 'cx32',
      cores: 4,
      memory_gb: 8,
      disk_gb: 80,
      architecture: 'x86',
      monthly_price_cents: 759,
      prices: ['fsn1', 'nbg1', 'hel1'].map((region) => ({ region, monthly_price_cents: 759 })),
    });
    assert.equal(body.server_types[3].prices.length, 4, 'cpx21 is offered everywhere, ash included');
    assert.equal(body.server_types[4].architecture, 'arm');
  });

  test(`kept ${CATALOG_TTL_SECONDS} s: the provider is asked again only after that`, async () => {
    t.h.clock.advanceSeconds(CATALOG_TTL_SECONDS + 1);
    const first = providerCalls();
    await Promise.all([catalog(), catalog(), catalog()]);
    const one = providerCalls() - first;
    assert.ok(one >= 3, 'one round of the provider');
    assert.equal((await catalog()).statusCode, 200);
    await createConfig(t);
    assert.equal(providerCalls() - first, one, 'concurrent reads, a later read and a config check share that round');
    t.h.clock.advanceSeconds(CATALOG_TTL_SECONDS + 1);
    await catalog();
    assert.equal(providerCalls() - first, 2 * one);
  });

  test('the provider failing: 503 with Retry-After, and the failure is not kept', async () => {
    t.h.clock.advanceSeconds(CATALOG_TTL_SECONDS + 1);
    t.stub.fail({ method: 'GET', path: /^\/server_types$/, status: 503, code: 'unavailable', times: 1 });
    const res = await catalog();
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(firstError(res.json()).code, 7404);
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal((await catalog()).statusCode, 200);
  });

  test('needs a credential (401)', async () => {
    const res = await t.h.app.inject({ method: 'GET', url: '/v1/compute/catalog' });
    assert.equal(res.statusCode, 401);
  });
});

describe('errors list what the catalog allows', () => {
  test('a compute config: region, image and machine_type_filter each name the allowed values', async () => {
    const res = await t.h.app.inject({
      method: 'POST',
      url: '/v1/compute/configs',
      headers: as(t.s.apiToken),
      payload: { ...CONFIG_BODY, region: 'mars1', image: 'windows-95', machine_type_filter: 'zz*' },
    });
    assert.equal(res.statusCode, 422);
    const messages = Object.fromEntries(res.json().errors.map((e: { path: string[]; message: string }) => [e.path[1], e.message]));
    assert.equal(messages.region, "region must be one of the provider's regions: fsn1, nbg1, hel1, ash");
    assert.equal(messages.image, "image must be one of the provider's images: ubuntu-24.04, debian-12, ubuntu-22.04");
    assert.equal(messages.machine_type_filter, "machine_type_filter matches none of the provider's server types: cx22, cx32, cpx11, cpx21, cax11");
    const inAsh = await t.h.app.inject({ method: 'POST', url: '/v1/compute/configs', headers: as(t.s.apiToken), payload: { ...CONFIG_BODY, region: 'ash', machine_type_filter: 'cx*' } });
    assert.equal(firstError(inAsh.json()).message, "machine_type_filter matches none of the provider's server types offered in ash: cpx11, cpx21");
  });

  test("a machine's server_type names the types its config can use", async () => {
    const configId = await createConfig(t, { ...CONFIG_BODY, machine_type_filter: 'cx*' });
    const create = (server_type: string) => t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: configId, server_type } });
    assert.equal(firstError((await create('zz1')).json()).message, 'server_type does not match the compute config\'s machine_type_filter "cx*"; this config can use: cx22, cx32');
    const unknown = await create('cx99');
    assert.equal(unknown.statusCode, 422);
    assert.deepEqual(firstError(unknown.json()).path, ['body', 'server_type']);
    assert.equal(firstError(unknown.json()).message, 'server_type is not a server type of the provider; this config can use: cx22, cx32');
    assert.equal(firstError((await create('cpx11')).json()).message, 'server_type does not match the compute config\'s machine_type_filter "cx*"; this config can use: cx22, cx32');
    const ashConfig = await createConfig(t, { ...CONFIG_BODY, region: 'ash', machine_type_filter: 'c*' });
    const notThere = await t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: ashConfig, server_type: 'cx22' } });
    assert.equal(firstError(notThere.json()).message, "server_type is not offered in the config's region ash; this config can use: cpx11, cpx21");
  });
});
