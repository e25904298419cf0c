import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { api, startServer, type ServerProcess } from '../helpers/processes.js';
import { registerSecret } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/service-deps.js';
import { EventLog } from '../../src/events/record.js';
import { DISABLE_AFTER_SECONDS } from '../../src/webhooks/delivery-job.js';
import { startReceiver } from './receiver.js';
import { masterKey } from '../reliability/servers.js';

/**
 * Issue 48, item 13: side effects of events are wired once, for every kind of process
 * (src/service-deps.ts, createDeps), not by the HTTP wiring. A `webhook.disabled` event is recorded by the
 * delivery job, so by `wsp worker` too, which builds no web server: with only a worker running,
 * an endpoint fails for a day (the worker's clock is moved: test/helpers/work-moved-clock.ts) and
 * is disabled, and a second endpoint subscribed to `webhook.*` receives the `webhook.disabled`
 * delivery, signed (verified with `standardwebhooks`). Before, the fan-out was subscribed in
 * mountWebhooks, and a worker recorded the event with nobody to fan it out.
 */
let tdb: TestDatabase;
let dir: string;
let env: Record<string, string>;
let boot: { workspace_id: string; user_id: string; session_token: string; api_token: string };
const processes: ServerProcess[] = [];
let secretW: string | undefined;
let watcher: Awaited<ReturnType<typeof startReceiver>>;
let failing: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  tdb = await openTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-worker-clock-'));
  boot = await createAdminService(tdb.database.db, systemClock).bootstrap();
  registerSecret(boot.session_token, boot.api_token);
  watcher = await startReceiver(() => secretW);
  failing = await startReceiver(
    () => undefined,
    () => 503,
  );
  env = {
    ...tdb.env,
    WSP_MASTER_KEY: masterKey(),
    WSP_WEBHOOKS_ALLOW_HTTP: 'true',
    WSP_WEBHOOKS_ALLOW_PRIVATE: 'true',
    // One retry, an hour after the first failure: the day passes by moving the worker's clock.
    WSP_WEBHOOK_RETRY_DELAYS_SECONDS: '3600',
  };
});
after(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await watcher?.close();
  await failing?.close();
  await tdb?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('wsp worker alone: an endpoint failing for a day is disabled, and the webhook.disabled event reaches an endpoint subscribed to webhook.*', { timeout: 90_000 }, async () => {
  // The endpoints and the event that will fail are made through a server that runs no jobs, then
  // stopped: from then on, only the worker runs.
  const server = await startServer(env, ['--no-worker']);
  processes.push(server);
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await api(server.url, method, url, { credential: boot.api_token, ...(body === undefined ? {} : { body }) });
    assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
    return res.body;
  };
  const w = await call('POST', '/v1/webhooks', { url: watcher.url, event_types: ['webhook.*'] });
  secretW = w.secret;
  const f = await call('POST', '/v1/webhooks', { url: failing.url, event_types: ['snippet.*'] });
  await call('POST', '/v1/snippets', { name: 'will fail', source: 'select 1' });
  assert.equal(await server.stop(), 0);
  processes.splice(processes.indexOf(server), 1);

  const offsetFile = path.join(dir, 'offset');
  fs.writeFileSync(offsetFile, '0');
  const worker = await startServer(env, [], ['--import', 'tsx', path.join(REPO_ROOT, 'test/helpers/work-moved-clock.ts'), offsetFile], 'worker started');
  processes.push(worker);
  const { db } = tdb.database;
  const delivery = () => db.selectFrom('webhook_deliveries').select(['state', 'attempts']).where('webhook_id', '=', f.id).executeTakeFirst();
  await waitFor('the first attempt to fail', async () => (await delivery())?.attempts === 1, { detail: async () => `${JSON.stringify(await delivery())}\n${worker.output.join('\n')}` });
  assert.equal(failing.received.length, 1);

  // A day and more later (the retry is due an hour after the first failure): the retry fails too,
  // and the endpoint has failed for a day.
  fs.writeFileSync(offsetFile, String(DISABLE_AFTER_SECONDS + 3600));
  const disabledEvent = await waitFor(
    "the webhook.disabled event's delivery to the endpoint taking webhook.*",
    () =>
      watcher.received.find((r) => {
        const e = JSON.parse(r.body) as { type: string; resource: { id: string } };
        return e.type === 'webhook.disabled' && e.resource.id === f.id;
      }),
    {
      timeoutMs: 30_000,
      detail: async () =>
        `endpoint ${JSON.stringify(await db.selectFrom('webhooks').select(['state', 'disabled_reason']).where('id', '=', f.id).executeTakeFirst())}; events ${JSON.stringify(await db.selectFrom('events').select(['type', 'resource_id']).where('type', '=', 'webhook.disabled').execute())}; received ${watcher.received.map((r) => JSON.parse(r.body).type).join(', ')}`,
    },
  );
  assert.equal(disabledEvent.verified, true, 'standardwebhooks verified its signature');
  const body = JSON.parse(disabledEvent.body);
  assert.deepEqual([body.type, body.workspace_id, body.actor.kind, body.resource.id], ['webhook.disabled', boot.workspace_id, 'system', f.id]);
  assert.equal(body.id, disabledEvent.id, 'webhook-id is the event id');
  assert.equal(failing.received.length, 2, 'the first attempt and its retry, a day later');
  const endpoint = await db.selectFrom('webhooks').select(['state']).where('id', '=', f.id).executeTakeFirstOrThrow();
  assert.equal(endpoint.state, 'disabled');
  // Once: one delivery of the event to the endpoint, succeeded. The worker records the attempt
  // after the receiver's answer reaches it: on a loaded machine that can be after the lines above.
  const deliveries = () => db.selectFrom('webhook_deliveries').select(['state', 'attempts']).where('webhook_id', '=', w.id).where('event_id', '=', body.id).execute();
  const made = await waitFor(
    'the delivery of webhook.disabled to be recorded',
    async () => {
      const rows = await deliveries();
      return rows.length > 0 && rows.every((r) => r.state !== 'pending') ? rows : null;
    },
    { timeoutMs: 30_000, detail: async () => JSON.stringify(await deliveries()) },
  );
  assert.deepEqual(made, [{ state: 'succeeded', attempts: 1 }]);
  assert.equal(await worker.stop(), 0);
  processes.splice(processes.indexOf(worker), 1);
});

test('the side effects are subscribed by createDeps, once; a second subscription under the same name is refused', async () => {
  const t = await openTestDatabase();
  try {
    const deps = await createDeps({ config: { ...loadConfig({}), dataDir: t.dataDir }, database: t.database, clock: systemClock, log: pino({ level: 'silent' }) });
    assert.deepEqual(deps.events.subscriberNames(), ['webhooks.fan-out']);
    assert.throws(() => deps.events.subscribe('webhooks.fan-out', async () => {}), /subscribed twice/);
    const log = new EventLog(systemClock);
    log.subscribe('a', async () => {});
    assert.throws(() => log.subscribe('a', async () => {}), /the event subscriber a is subscribed twice/);
  } finally {
    await t.cleanup();
  }
});
