import { createTestApp, as, type TestApp, type Seed } from '../helpers/harness.js';
import type { Config } from '../../src/config.js';
import { ProviderStub } from './provider-stub.js';

export const PLATFORM_TOKEN = 'platform-token';
export const BYO_TOKEN = 'byo-token';

export interface ComputeTest {
  h: TestApp;
  s: Seed;
  stub: ProviderStub;
  close(): Promise<void>;
}

/** An app whose provider adapter talks HTTP to a fresh stub of the provider's API. */
export async function computeTestApp(config: Partial<Config> = {}): Promise<ComputeTest> {
  const stub = new ProviderStub([PLATFORM_TOKEN, BYO_TOKEN]);
  await stub.start();
  const h = await createTestApp({
    config: { provider: { id: 'hetzner', url: stub.url, token: PLATFORM_TOKEN, timeoutMs: 2000, actionPollMs: 1 }, ...config },
  });
  stub.now = () => h.clock.nowMs();
  const s = await h.seed();
  return {
    h,
    s,
    stub,
    async close() {
      await h.close();
      await stub.stop();
    },
  };
}

export const CONFIG_BODY = { name: 'web', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', machine_type_filter: 'cx*' };

export async function createConfig(t: ComputeTest, body: Record<string, unknown> = CONFIG_BODY, credential = t.s.apiToken): Promise<string> {
  const res = await t.h.app.inject({ method: 'POST', url: '/v1/compute/configs', headers: as(credential), payload: body });
  if (res.statusCode !== 201) throw new Error(`config: ${res.statusCode} ${res.body}`);
  return res.json().id;
}

/** A machine of a new config, created and brought to `running` by the job runner. */
export async function runningMachine(t: ComputeTest, body: Record<string, unknown> = {}, configBody: Record<string, unknown> = CONFIG_BODY) {
  const configId = await createConfig(t, configBody);
  const res = await t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: configId, server_type: 'cx22', ...body } });
  if (res.statusCode !== 201) throw new Error(`machine: ${res.statusCode} ${res.body}`);
  await t.h.app.jobs.runDue();
  return getMachine(t, res.json().id);
}

export async function getMachine(t: ComputeTest, id: string) {
  const res = await t.h.app.inject({ method: 'GET', url: `/v1/machines/${id}`, headers: as(t.s.apiToken) });
  if (res.statusCode !== 200) throw new Error(`get machine: ${res.statusCode} ${res.body}`);
  return res.json();
}

export async function getOperation(t: ComputeTest, id: string) {
  return (await t.h.app.inject({ method: 'GET', url: `/v1/operations/${id}`, headers: as(t.s.apiToken) })).json();
}

export async function suspend(t: ComputeTest, machine: { id: string; etag: string }, body?: unknown) {
  return t.h.app.inject({
    method: 'POST',
    url: `/v1/machines/${machine.id}:suspend`,
    headers: as(t.s.apiToken, undefined, { 'if-match': `"${machine.etag}"` }),
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

export async function suspensions(t: ComputeTest, credential = t.s.apiToken) {
  return (await t.h.app.inject({ method: 'GET', url: '/v1/compute/suspensions', headers: as(credential) })).json();
}
