import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { logInTo, removeTempConfigDirs, runCli, runCliOk } from './cli-harness.js';
import { startReceiver } from '../webhooks/receiver.js';
import { RETRY_DELAYS_SECONDS } from '../../src/webhooks/delivery-job.js';

/** The CLI of docs/spec-gaps.md, "Events and the audit log": `wsp audit list` and `wsp webhooks ...` (the admin's session). */
let configDir: string;
let secret: string | undefined;
let rx: Awaited<ReturnType<typeof startReceiver>>;
const h = useTestApp({
  // A receiver on loopback for `webhooks attempts`; the other tests name public addresses never reached.
  config: { webhooks: { allowHttp: true, allowPrivate: true, retryDelaysSeconds: RETRY_DELAYS_SECONDS } },
  setup: async () => {
    configDir = await logInTo(h, s, 'admin');
    rx = await startReceiver(
      () => secret,
      (_r, n) => (n === 1 ? { status: 500, headers: { 'x-trace': 'cli-trace' }, body: 'database unavailable' } : { status: 200, body: 'thanks' }),
    );
  },
  teardown: async () => {
    removeTempConfigDirs();
    await rx.close();
  },
});
const s = h.seeded;

const wsp = (...argv: string[]) => runCliOk(argv, { configDir });

test('webhooks: create shows the secret once, list, test, deliveries, retry, delete', async () => {
  const made = JSON.parse((await wsp('webhooks', 'create', '--url', 'https://93.184.216.34/hook', '--events', 'secret.*,install.created', '--json')).stdout);
  assert.match(made.secret, /^whsec_/);
  const plain = await wsp('webhooks', 'create', '--url', 'https://93.184.216.34/other', '--events', 'dashboard.*');
  assert.match(plain.stdout, /secret:\s+whsec_/);
  assert.match(plain.stderr, /never shown again/);
  const listed = await wsp('webhooks', 'list');
  assert.match(listed.stdout, new RegExp(`${made.id}\\s+https://93.184.216.34/hook\\s+secret\\.\\*,install\\.created\\s+enabled`));
  assert.ok(!listed.stdout.includes(made.secret));
  const tested = await wsp('webhooks', 'test', made.id);
  assert.match(tested.stdout, /^Queued whd_\S+ \(webhook\.tested\)/);
  const deliveries = JSON.parse((await wsp('webhooks', 'deliveries', made.id, '--json')).stdout);
  assert.equal(deliveries.data[0].event_type, 'webhook.tested');
  assert.match((await wsp('webhooks', 'retry', made.id, deliveries.data[0].id)).stdout, /^Queued whd_\S+ again\./);
  assert.match((await wsp('webhooks', 'delete', made.id, '--yes')).stdout, new RegExp(`^Deleted ${made.id}\\.`));
  const unknown = await runCli(['webhooks', 'create', '--url', 'https://93.184.216.34/x', '--events', 'secret.exploded'], { configDir });
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /secret\.created/, 'the refusal lists the known types');
});

test('webhooks attempts: a table of each attempt (the answer or the error), --details each request and response, --json the API page', async () => {
  const made = JSON.parse((await wsp('webhooks', 'create', '--url', rx.url, '--events', 'webhook.tested', '--json')).stdout);
  secret = made.secret;
  const queued = JSON.parse((await wsp('webhooks', 'test', made.id, '--json')).stdout);
  await h.app.jobs.runDue();
  h.clock.advanceSeconds(RETRY_DELAYS_SECONDS[0]!);
  await h.app.jobs.runDue();
  assert.equal(rx.received.length, 2);
  assert.ok(rx.received.every((r) => r.verified));
  const table = (await wsp('webhooks', 'attempts', made.id, queued.id)).stdout.split('\n');
  assert.match(table[0]!, /^#\s+STARTED\s+TOOK\s+ANSWER$/);
  assert.match(table[1]!, /^1\s+\S+\s+\d+ ms\s+500 database unavailable$/);
  assert.match(table[2]!, /^2\s+\S+\s+\d+ ms\s+200 thanks$/);
  const details = (await wsp('webhooks', 'attempts', made.id, queued.id, '--details')).stdout;
  assert.match(details, /^Attempt 1, \S+, \d+ ms: answered 500: database unavailable$/m);
  assert.ok(details.includes(`> POST ${rx.url}`));
  assert.ok(details.includes(`> webhook-signature: ${rx.received[0]!.signature}`), 'the signature sent, as received');
  assert.ok(details.includes(rx.received[0]!.body), 'the body sent');
  assert.match(details, /^< 500$/m);
  assert.match(details, /^< x-trace: cli-trace$/m);
  assert.match(details, /^Attempt 2, /m);
  const page = JSON.parse((await wsp('webhooks', 'attempts', made.id, queued.id, '--limit', '1', '--json')).stdout);
  assert.deepEqual([page.data.length, page.data[0].number, page.data[0].response.status, page.has_more], [1, 1, 500, true]);
  const missing = await runCli(['webhooks', 'attempts', made.id, 'whd_0000000000000000000000000a'], { configDir });
  assert.equal(missing.code, 1, missing.stderr);
  await wsp('webhooks', 'delete', made.id, '--yes');
});

test('audit list: newest first, filtered by type; --json is the API answer', async () => {
  await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: { authorization: `Bearer ${s.apiToken}` }, payload: { name: 'audited' } });
  const table = await wsp('audit', 'list', '--type', 'secret.*', '--limit', '5');
  assert.match(table.stdout, /secret\.created\s+tok_\S+\s+sec_/);
  const json = JSON.parse((await wsp('audit', 'list', '--type', 'webhook.*', '--json')).stdout);
  assert.ok(json.data.length >= 3 && json.data.every((e: { type: string }) => e.type.startsWith('webhook.')));
  assert.equal(json.data[0].type, 'webhook.deleted', 'newest first: the deletion of the first test');
});
