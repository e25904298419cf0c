import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from '../installs/fixture.js';
import { logInTo, removeTempConfigDirs, runCli } from './cli-harness.js';

/** The CLI of docs/spec-gaps.md, "Lifecycles" on the embedded provider: compute catalog, machines list/resume/delete, secrets by name and latest, packages preview. */
let f: ReturnType<typeof installFixture>;
let configDir: string;
const h = useTestApp({
  setup: async () => {
    configDir = await logInTo(h, s, 'admin');
    f = installFixture(h, s);
  },
  teardown: async () => {
    removeTempConfigDirs();
  },
});
const s = h.seeded;

const api = async (method: 'GET' | 'POST', url: string, payload?: object, extra: Record<string, string> = {}) => {
  const res = await h.app.inject({ method, url, headers: as(s.apiToken, undefined, extra), ...(payload ? { payload } : {}) });
  assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};

async function runningMachine() {
  const config = await api('POST', '/v1/compute/configs', { name: 'cli', provider: 'hetzner', region: 'fsn1', image: 'debian-12', machine_type_filter: 'cx*' });
  const machine = await api('POST', '/v1/machines', { compute_config_id: config.id, server_type: 'cx22' });
  await h.app.jobs.runDue();
  return api('GET', `/v1/machines/${machine.id}`);
}

const runJobs = () => h.app.jobs.runDue().then(() => undefined);

test('compute catalog: regions, images and server types with prices; --json is the API answer', async () => {
  const run = await runCli(['compute', 'catalog'], { configDir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /Provider: hetzner/);
  assert.match(run.stdout, /fsn1\s+Falkenstein DC Park 1/);
  assert.match(run.stdout, /debian-12\s+Debian 12/);
  assert.match(run.stdout, /cx32\s+4\s+8 GB\s+80 GB\s+x86\s+€7\.59\s+fsn1 nbg1 hel1/);
  const json = JSON.parse((await runCli(['compute', 'catalog', '--json'], { configDir })).stdout);
  assert.deepEqual(json, await api('GET', '/v1/compute/catalog'));
});

test('machines list, then resume a suspended machine and delete it, each waiting for its operation', async () => {
  const m = await runningMachine();
  const listed = await runCli(['machines', 'list'], { configDir });
  assert.match(listed.stdout, new RegExp(`${m.id}\\s+${m.hostname}\\s+cx22\\s+fsn1\\s+running`));

  await api('POST', `/v1/machines/${m.id}:suspend`, undefined, { 'if-match': `"${m.etag}"` });
  await h.app.jobs.runDue();
  const resumed = await runCli(['machines', 'resume', m.id], { configDir, onSleep: runJobs });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, new RegExp(`Resumed ${m.id}`));
  assert.equal((await api('GET', `/v1/machines/${m.id}`)).status, 'running');

  const again = await runCli(['machines', 'resume', m.id], { configDir });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /Only a suspended machine can be resumed; this one is running/);

  const deleted = await runCli(['machines', 'delete', m.id, '--json', '--yes'], { configDir, onSleep: runJobs });
  assert.equal(deleted.code, 0, deleted.stderr);
  const out = JSON.parse(deleted.stdout);
  assert.equal(out.operation.done, true);
  assert.equal(out.operation.kind, 'machine.delete');
  const gone = await h.app.inject({ method: 'GET', url: `/v1/machines/${m.id}`, headers: as(s.apiToken) });
  assert.equal(gone.statusCode, 404);
});

test('machines delete --no-wait answers the operation at once; a second delete is the API 409 (exit 1)', async () => {
  const m = await runningMachine();
  const run = await runCli(['machines', 'delete', m.id, '--no-wait', '--yes'], { configDir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, new RegExp(`Deleting ${m.id}: operation op_\\w+`));
  const twice = await runCli(['machines', 'delete', m.id, '--yes'], { configDir });
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /already being deleted/);
  await h.app.jobs.runDue();
});

test('secrets list --name finds one; secrets access reads the newest enabled version without a version id', async () => {
  const secret = await api('POST', '/v1/secrets', { name: 'cli-latest' });
  await api('POST', '/v1/secrets', { name: 'cli-other' });
  await api('POST', `/v1/secrets/${secret.id}/versions`, { data: Buffer.from('first').toString('base64') });
  await api('POST', `/v1/secrets/${secret.id}/versions`, { data: Buffer.from('second').toString('base64') });
  const listed = await runCli(['secrets', 'list', '--name', 'cli-latest', '--json'], { configDir });
  assert.deepEqual(
    JSON.parse(listed.stdout).data.map((x: { id: string }) => x.id),
    [secret.id],
  );
  const read = await runCli(['secrets', 'access', secret.id], { configDir });
  assert.equal(read.code, 0, read.stderr);
  assert.equal(read.stdout, 'second');
  assert.equal((await runCli(['secrets', 'access', secret.id, 'latest'], { configDir })).stdout, 'second');
});

test('packages preview: rendered files with --values; a missing value is the API 422 naming it (exit 1)', async () => {
  const pkg = await f.createPackage();
  const v = await f.publish(pkg.id, '1.0.0', { 'hello.txt': 'Hello {{who}}\n', 'conf/app.yaml': 'replicas: {{replicas}}\n' });
  const values = path.join(configDir, 'values.json');
  fs.writeFileSync(values, JSON.stringify({ who: 'moon', replicas: 3 }));
  const run = await runCli(['packages', 'preview', pkg.id, v.id, '--values', values], { configDir });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, '==> conf/app.yaml <==\nreplicas: 3\n==> hello.txt <==\nHello moon\n');
  fs.writeFileSync(values, JSON.stringify({ who: 'moon' }));
  const missing = await runCli(['packages', 'preview', pkg.id, v.id, '--values', values], { configDir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /replicas/);
  fs.writeFileSync(values, '[1]');
  assert.equal((await runCli(['packages', 'preview', pkg.id, v.id, '--values', values], { configDir })).code, 2, 'not an object: bad usage');
  const renders = await h.database.db.selectFrom('renders').select('id').execute();
  assert.equal(renders.length, 0, 'a preview writes no render');
});

test('installs delete --no-wait answers the operation at once; without it, the command waits until the repository is gone (exit 0)', async () => {
  const { install } = await f.installed();
  await h.app.jobs.runDue();
  const started = await runCli(['installs', 'delete', install.id, '--no-wait', '--json', '--yes'], { configDir });
  assert.equal(started.code, 0, started.stderr);
  const { operation_id: opId } = JSON.parse(started.stdout);
  assert.match(opId, /^op_/);
  assert.equal((await api('GET', `/v1/operations/${opId}`)).done, false, 'returned before the removal ran');
  await h.app.jobs.runDue();

  const other = await f.installed();
  await h.app.jobs.runDue();
  const waited = await runCli(['installs', 'delete', other.install.id, '--yes'], { configDir, onSleep: runJobs });
  assert.equal(waited.code, 0, waited.stderr);
  assert.match(waited.stdout, new RegExp(`Deleted ${other.install.id}`));
  assert.ok(!fs.existsSync(f.repoPath(other.install.id)), 'the repository is gone when the command returns');
});
