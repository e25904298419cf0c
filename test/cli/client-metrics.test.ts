import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from '../installs/fixture.js';
import { logInTo, removeTempConfigDirs, runCli, runCliOk } from './cli-harness.js';

/** `wsp metrics list|series` and `wsp renders files`: the routes of issue 19 from the command line. */
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

test('metrics list names each metric with its kind and filters; series prints the points, --json the API answer', async () => {
  const list = await wsp('metrics', 'list');
  assert.match(list.stdout, /renders\s+1\s+counter\s+renders\s+install,status/);
  assert.match(list.stdout, /machines_running\s+1\s+gauge/);
  const from = Math.floor(h.clock.nowMs() / 1000);
  h.clock.advanceSeconds(30);
  await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: { authorization: `Bearer ${s.apiToken}` }, payload: { name: 'counted' } });
  const table = await wsp('metrics', 'series', 'writes', '--from', String(from), '--to', String(from + 120), '--step', '60s', '--type', 'secret.created');
  const lines = table.stdout.trim().split('\n');
  assert.match(lines[0]!, /TIME\s+EVENTS/);
  assert.match(lines[1]!, /Z\s+1$/);
  assert.match(lines[2]!, /Z\s+0$/);
  const json = JSON.parse((await wsp('metrics', 'series', 'writes', '--from', String(from), '--to', String(from + 120), '--step', '60s', '--json')).stdout);
  assert.deepEqual(json.points, [
    [from + 60, 1],
    [from + 120, 0],
  ]);
  // --from and --to also take ISO 8601; a step without its unit is refused.
  const iso = (t: number) => new Date(t * 1000).toISOString();
  const same = JSON.parse((await wsp('metrics', 'series', 'writes', '--from', iso(from), '--to', iso(from + 120), '--step', '1m', '--json')).stdout);
  assert.deepEqual(same.points, json.points);
  const bare = await runCli(['metrics', 'series', 'writes', '--step', '60'], { configDir });
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /^error: --step needs a unit: 60s, 60m, 60h or 60d$/m);
  const unknown = await runCli(['metrics', 'series', 'nope'], { configDir });
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /no platform metric nope/);
});

test("renders files lists a commit's files; --path prints one; a path the commit or version lacks is exit 1 (an answer), not 2 (usage)", async () => {
  const f = installFixture(h, s);
  const { install, pkg, v1 } = await f.installed({ who: 'cli' });
  await h.app.jobs.runDue();
  const [render] = await f.renders(install.id);
  const table = await wsp('renders', 'files', render.id);
  assert.match(table.stdout, /hello\.txt\s+13/);
  assert.equal((await wsp('renders', 'files', render.id, '--path', 'hello.txt')).stdout, 'Hello cli v1\n');
  const missing = await runCli(['renders', 'files', render.id, '--path', 'nope.txt'], { configDir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: the commit [0-9a-f]{10} has no file nope\.txt$/m);
  const noTemplate = await runCli(['packages', 'version', pkg.id, v1.id, '--path', 'nope.txt'], { configDir });
  assert.equal(noTemplate.code, 1);
  assert.match(noTemplate.stderr, /^error: version 1\.0\.0 has no file nope\.txt$/m);
});
