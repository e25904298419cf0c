import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { runWsp } from '../helpers/processes.js';
import { logInTo, removeTempConfigDirs, runCli, tempConfigDir } from './cli-harness.js';

/** WSP_TOKEN, WSP_SERVER and WSP_WORKSPACE (issue 20): CI jobs and scripts without a login. */
let other: Seed;
let configDir: string;
let server: string;
const h = useTestApp({
  setup: async () => {
    configDir = await logInTo(h, s, 'admin');
    other = await h.seed('Other');
    server = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: { authorization: `Bearer ${s.apiToken}` }, payload: { name: 'mine' } });
    await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: { authorization: `Bearer ${other.apiToken}` }, payload: { name: 'theirs' } });
  },
  teardown: async () => {
    removeTempConfigDirs();
  },
});
const s = h.seeded;

const names = (stdout: string) => (JSON.parse(stdout).data as { name: string }[]).map((x) => x.name);

test('WSP_TOKEN with WSP_SERVER works with no login at all; an API token needs no workspace', async () => {
  const run = await runCli(['secrets', 'list', '--json'], { configDir: tempConfigDir(), env: { WSP_TOKEN: other.apiToken, WSP_SERVER: server } });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(names(run.stdout), ['theirs']);
  const none = await runCli(['secrets', 'list'], { configDir: tempConfigDir() });
  assert.equal(none.code, 3);
  assert.match(none.stderr, /WSP_TOKEN/);
});

test('WSP_TOKEN wins over the stored login (as GH_TOKEN does)', async () => {
  assert.deepEqual(names((await runCli(['secrets', 'list', '--json'], { configDir })).stdout), ['mine']);
  const run = await runCli(['secrets', 'list', '--json'], { configDir, env: { WSP_TOKEN: other.apiToken } });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(names(run.stdout), ['theirs'], 'the token of the other workspace, on the stored server');
});

test('a WSP_TOKEN the server refuses is said to be refused (exit 3), not "run wsp login", which could not help', async () => {
  const forged = `${other.apiToken.slice(0, -6)}AAAAAA`;
  const run = await runCli(['secrets', 'list'], { configDir, env: { WSP_TOKEN: forged, WSP_SERVER: server } });
  assert.equal(run.code, 3);
  assert.match(run.stderr, /^error: the server refused the token in WSP_TOKEN \(unknown, expired or revoked\)/m);
  assert.doesNotMatch(run.stderr, /wsp login`/);
  const json = await runCli(['secrets', 'list', '--json'], { configDir, env: { WSP_TOKEN: 'wsp_not_a_token_at_all_1234567890' } });
  assert.equal(json.code, 3);
  assert.equal(JSON.parse(json.stderr).error.kind, 'not_logged_in');
  assert.match(JSON.parse(json.stderr).error.message, /refused the token in WSP_TOKEN/);
});

test('WSP_WORKSPACE names the workspace over the stored one', async () => {
  await h.admin.addMember(other.workspaceId, s.admin.userId, 'member');
  const run = await runCli(['secrets', 'list', '--json'], { configDir, env: { WSP_WORKSPACE: other.workspaceId } });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(names(run.stdout), ['theirs']);
});

test('wsp --version prints the package version', async () => {
  const run = await runWsp(['--version'], {});
  assert.equal(run.code, 0, run.stderr);
  // The runner starts each test file in the repository.
  const { version } = JSON.parse(fs.readFileSync(path.join(process.cwd(), 'package.json'), 'utf8')) as { version: string };
  assert.equal(run.stdout, `wsp ${version}\n`);
});

test('a typo gets a short answer with what it may have meant, not the whole help', async () => {
  const top = await runWsp(['secret', 'list'], {});
  assert.equal(top.code, 2);
  assert.equal(top.stderr, 'error: unknown command "secret"; did you mean "wsp secrets"?\nRun `wsp --help` for the list of commands.\n');
  const nothing = await runWsp(['frobnicate'], {});
  assert.equal(nothing.stderr, 'error: unknown command "frobnicate"\nRun `wsp --help` for the list of commands.\n');
  const sub = await runCli(['secrets', 'lsit'], { configDir });
  assert.equal(sub.code, 2);
  assert.match(sub.stderr, /^error: unknown command "wsp secrets lsit"; did you mean "wsp secrets list"\?\n/);
  const far = await runCli(['secrets', 'zzzzzz'], { configDir });
  assert.doesNotMatch(far.stderr, /did you mean/);
});
