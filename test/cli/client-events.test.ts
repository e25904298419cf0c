import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { logInTo, removeTempConfigDirs, runCli, runCliOk } from './cli-harness.js';

/** The CLI of docs/spec-gaps.md, "Events and the audit log": `wsp audit list` and `wsp webhooks ...` (the admin's session). */
let configDir: string;
const h = useTestApp({
  setup: async () => {
    configDir = await logInTo(h, s, 'admin');
  },
  teardown: async () => {
    removeTempConfigDirs();
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

test('audit list: newest first, filtered by type; --json is the API answer', async () => {
  await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: { authorization: `Bearer ${s.apiToken}` }, payload: { name: 'audited' } });
  const table = await wsp('audit', 'list', '--type', 'secret.*', '--limit', '5');
  assert.match(table.stdout, /secret\.created\s+tok_\S+\s+sec_/);
  const json = JSON.parse((await wsp('audit', 'list', '--type', 'webhook.*', '--json')).stdout);
  assert.ok(json.data.length >= 3 && json.data.every((e: { type: string }) => e.type.startsWith('webhook.')));
  assert.equal(json.data[0].type, 'webhook.deleted', 'newest first: the deletion of the first test');
});
