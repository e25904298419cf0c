import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { BYO_TOKEN, useComputeTestApp, CONFIG_BODY, createConfig, getMachine, getOperation, PLATFORM_TOKEN, suspend, suspensions } from './setup.js';

/** Bring-your-own machine account: a config with secret_id acts with the secret's newest enabled version. */
const t = useComputeTestApp();

async function secret(name: string, ...tokens: string[]) {
  const made = await t.h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(t.s.apiToken), payload: { name } });
  assert.equal(made.statusCode, 201, made.body);
  const id: string = made.json().id;
  const versions = [];
  for (const token of tokens) {
    const v = await t.h.app.inject({ method: 'POST', url: `/v1/secrets/${id}/versions`, headers: as(t.s.apiToken), payload: { data: Buffer.from(token).toString('base64') } });
    assert.equal(v.statusCode, 201, v.body);
    versions.push(v.json<{ id: string; etag: string }>());
  }
  return { id, versions };
}

const disable = (secretId: string, v: { id: string; etag: string }) =>
  t.h.app.inject({ method: 'POST', url: `/v1/secrets/${secretId}/versions/${v.id}:disable`, headers: as(t.s.apiToken, undefined, { 'if-match': v.etag }) });

const createMachine = (configId: string) => t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: configId, server_type: 'cx22' } });

describe('bring-your-own provider account', () => {
  test("machines of the config live in the workspace's own provider project; the newest enabled version is the token", async () => {
    const { id: secretId } = await secret('hetzner-own', 'an-older-token', `  ${BYO_TOKEN}\n`);
    const configId = await createConfig(t, { ...CONFIG_BODY, secret_id: secretId.slice(4) });
    const config = (await t.h.app.inject({ method: 'GET', url: `/v1/compute/configs/${configId}`, headers: as(t.s.apiToken) })).json();
    assert.equal(config.secret_id, secretId, 'stored canonical');

    const m = (await createMachine(configId)).json();
    await t.h.app.jobs.runDue();
    const running = await getMachine(t, m.id);
    assert.equal(running.status, 'running');
    assert.ok(t.stub.project(BYO_TOKEN).servers.has(running.provider_server_id));
    assert.equal(t.stub.project(PLATFORM_TOKEN).servers.has(running.provider_server_id), false);
    assert.ok(t.stub.requestsTo('POST', /^\/servers$/).some((r) => r.token === BYO_TOKEN));

    await suspend(t, running);
    await t.h.app.jobs.runDue();
    const susp = (await suspensions(t)).find((s: { hostname: string }) => s.hostname === running.hostname);
    assert.ok(t.stub.project(BYO_TOKEN).snapshots.has(susp.provider_suspend_data.snapshot_id));
  });

  test('an older version is used once the newer one is disabled; a token the provider refuses fails the machine (7405)', async () => {
    const { id: secretId, versions } = await secret('hetzner-rotated', 'revoked-token', BYO_TOKEN);
    const configId = await createConfig(t, { ...CONFIG_BODY, secret_id: secretId });
    assert.equal((await disable(secretId, versions[1]!)).statusCode, 200);
    const m = (await createMachine(configId)).json();
    await t.h.app.jobs.runDue();
    assert.equal((await getMachine(t, m.id)).status, 'failed');
    const op = await getOperation(t, m.operation_id);
    assert.equal(op.error.code, 7405);
    assert.match(op.error.message, /unauthorized/);
    assert.ok(t.stub.requests.some((r) => r.token === 'revoked-token'));
  });

  test('a secret with no enabled version cannot create machines: 409 (7403)', async () => {
    const { id: secretId, versions } = await secret('hetzner-off', BYO_TOKEN);
    const configId = await createConfig(t, { ...CONFIG_BODY, secret_id: secretId });
    assert.equal((await disable(secretId, versions[0]!)).statusCode, 200);
    const res = await createMachine(configId);
    assert.equal(res.statusCode, 409);
    assert.equal(firstError(res.json()).code, 7403);
    const empty = await secret('hetzner-empty');
    const emptyConfig = await createConfig(t, { ...CONFIG_BODY, secret_id: empty.id });
    assert.equal((await createMachine(emptyConfig)).statusCode, 409);
  });

  test("another workspace's secret is 404 on body.secret_id", async () => {
    const other = await t.h.seed('Neighbour');
    const made = await t.h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(other.apiToken), payload: { name: 'theirs' } });
    const res = await t.h.app.inject({ method: 'POST', url: '/v1/compute/configs', headers: as(t.s.apiToken), payload: { ...CONFIG_BODY, secret_id: made.json().id } });
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7002);
    assert.deepEqual(firstError(res.json()).path, ['body', 'secret_id']);
  });
});
