import { after } from 'node:test';
import { as, type TestApp, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import type { Config } from '../../src/config.js';
import pino from 'pino';
import { ProviderStub } from './provider-stub.js';
import { testRunner } from '../helpers/jobs.js';
import { JOB_KINDS } from '../../src/job-kinds.js';
import { computeJobDefinitions } from '../../src/compute/jobs/register.js';
import { createProviderAccounts } from '../../src/compute/provider/accounts.js';
import type { ComputeJobDeps } from '../../src/compute/jobs/common.js';
import type { JobRunner } from '../../src/jobs/runner.js';

export const PLATFORM_TOKEN = 'platform-token';
export const BYO_TOKEN = 'byo-token';

export interface ComputeTest {
  h: TestApp;
  s: Seed;
  stub: ProviderStub;
  close(): Promise<void>;
}

/**
 * An app whose provider adapter talks HTTP to a fresh stub of the provider's API, for the whole
 * file (or describe) as useTestApp: its before/after registered, `setup` run once the app, its
 * seed and the stub exist. The stub stops after the app closes.
 */
export function useComputeTestApp(config: Partial<Config> = {}, opts: { setup?: (t: ComputeTest) => unknown } = {}): ComputeTest {
  const stub = new ProviderStub([PLATFORM_TOKEN, BYO_TOKEN]);
  const h = useTestApp(async () => {
    await stub.start();
    return {
      config: { provider: { id: 'hetzner', url: stub.url, token: PLATFORM_TOKEN, timeoutMs: 2000, actionPollMs: 1 }, ...config },
      setup: async () => {
        stub.now = () => h.clock.nowMs();
        await opts.setup?.(t);
      },
    };
  });
  after(() => stub.stop());
  const t: ComputeTest = { h, s: h.seeded, stub, close: () => h.close() };
  return t;
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

/** Another server instance's job worker on the same database and provider (its own provider clients). */
export function secondInstance(t: ComputeTest, workerId: string): { runner: JobRunner; deps: ComputeJobDeps } {
  const runner = testRunner(t.h.database, t.h.clock, JOB_KINDS, { workerId });
  const deps: ComputeJobDeps = {
    db: t.h.database.db,
    engine: t.h.database.engine,
    clock: t.h.clock,
    log: pino({ level: 'silent' }),
    jobs: runner.queue,
    config: t.h.config,
    accounts: createProviderAccounts(t.h.config.provider, t.h.clock),
    secrets: { exists: async () => false, newestEnabledPayload: async () => null },
  };
  runner.define(computeJobDefinitions(deps));
  return { runner, deps };
}
