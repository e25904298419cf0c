import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from '../installs/fixture.js';
import { logInTo, removeTempConfigDirs, runCli } from './cli-harness.js';

/** `wsp installs restore`: If-Match and Idempotency-Key sent, then the operation waited for. */
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

/** An install rendered at 1.0.0 and then at 2.0.0: two succeeded renders. */
async function twoRenders() {
  const x = await f.installed();
  await h.app.jobs.runDue();
  await f.patch(x.install.id, { desired_version_id: x.v2.id, values: { who: 'moon' } });
  await h.app.jobs.runDue();
  const [, first] = await f.renders(x.install.id);
  return { ...x, first };
}

test('restores, waits for the operation (the worker runs while the client waits), and reports the new render', async () => {
  const { install, first, v1 } = await twoRenders();
  let waits = 0;
  const run = await runCli(['installs', 'restore', install.id, '--render', first.id, '--json'], {
    configDir,
    onSleep: async () => {
      waits++;
      await h.app.jobs.runDue();
    },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(waits >= 1, 'it waited for the operation');
  const out = JSON.parse(run.stdout);
  assert.equal(out.operation.done, true);
  assert.equal(out.operation.error, null);
  assert.equal(out.render.state, 'succeeded');
  assert.equal(out.render.restored_from_render_id, first.id);
  assert.equal((await f.getInstall(install.id)).current_version.id, v1.id);
});

test('progress on stderr and a summary in a pipe; a render of another package is the API’s 422 (exit 1)', async () => {
  const { install, first } = await twoRenders();
  const run = await runCli(['installs', 'restore', install.id, '--render', first.id], { configDir, onSleep: () => h.app.jobs.runDue().then(() => undefined) });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /Restoring rnd_\w+ \(operation op_\w+\)…/);
  assert.match(run.stderr, /succeeded after \d+ s/);
  assert.match(run.stdout, /^render: +rnd_\w+ \(succeeded\)$/m);
  assert.match(run.stdout, /^commit: +[0-9a-f]{40}$/m);

  const other = await twoRenders();
  const wrong = await runCli(['installs', 'restore', install.id, '--render', other.first.id], { configDir });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /^error: 422: .*\(body\.render_id\) \[7304\]$/m);
});

test('an operation that does not finish in --timeout: exit 1', async () => {
  const { install, first } = await twoRenders();
  // No worker runs: the operation stays running; each wait is a second of real time.
  const run = await runCli(['installs', 'restore', install.id, '--render', first.id, '--timeout', '1s'], {
    configDir,
    onSleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /not done after 1 s/);
});

test('installs create waits for the first render: its state when the command returns', async () => {
  const { pkg, v1 } = await f.installed();
  await h.app.jobs.runDue();
  let waits = 0;
  const run = await runCli(['installs', 'create', '--name', 'waits-for-render', '--package', pkg.id, '--package-version', v1.id, '--values', '-', '--json'], {
    configDir,
    stdin: '{"who":"there"}',
    onSleep: async () => {
      waits++;
      await h.app.jobs.runDue();
    },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(waits >= 1, 'it waited for the render');
  const made = JSON.parse(run.stdout);
  assert.equal(made.last_render.state, 'succeeded');
  assert.equal(made.current_version.id, v1.id);
});

test('installs update whose render fails (a missing value) exits 1 with the render’s error, not "queued" and 0', async () => {
  const { install } = await f.installed();
  await h.app.jobs.runDue();
  const run = await runCli(['installs', 'update', install.id, '--values', '-'], { configDir, stdin: '{"nobody":"x"}', onSleep: () => h.app.jobs.runDue().then(() => undefined) });
  assert.equal(run.code, 1, run.stdout);
  assert.match(run.stderr, /^error: render rnd_\w+ failed: hello\.txt: no value for \{\{who\}\} \[7310\]$/m);
  assert.equal((await f.getInstall(install.id)).last_render.state, 'failed');

  const json = await runCli(['installs', 'update', install.id, '--values', '-', '--json'], { configDir, stdin: '{"nobody":"y"}', onSleep: () => h.app.jobs.runDue().then(() => undefined) });
  assert.equal(json.code, 1);
  assert.equal(JSON.parse(json.stderr).error.exit_code, 1);
  assert.match(JSON.parse(json.stderr).error.message, /no value for \{\{who\}\}/);
});

test('--no-wait returns at once with the render queued; a change that renders nothing waits for nothing', async () => {
  const { install } = await f.installed();
  await h.app.jobs.runDue();
  let waits = 0;
  const onSleep = () => {
    waits++;
  };
  const queued = await runCli(['installs', 'update', install.id, '--values', '-', '--no-wait'], { configDir, stdin: '{"who":"later"}', onSleep });
  assert.equal(queued.code, 0, queued.stderr);
  assert.match(queued.stderr, /render rnd_\w+ is queued \(operation op_\w+\)/);
  assert.match(queued.stdout, /^last render: +rnd_\w+ \(queued\)$/m);
  assert.equal(waits, 0);
  await h.app.jobs.runDue();

  const toggled = await runCli(['installs', 'update', install.id, '--auto-update'], { configDir, onSleep });
  assert.equal(toggled.code, 0, toggled.stderr);
  assert.equal(waits, 0, 'turning automatic updates on starts no render');
  assert.match(toggled.stdout, /^auto-update: +on$/m);
});
