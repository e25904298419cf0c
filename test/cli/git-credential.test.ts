import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from '../installs/fixture.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { runWsp } from '../helpers/processes.js';
import { writeCredentials } from '../../src/cli/client/credentials.js';
import { runCli } from './cli-harness.js';

/**
 * `wsp auth setup-git` (issue 20): after it, plain `git clone <clone_url>` and `git fetch` work
 * with the login, git asking `wsp auth git-credential` (a real process) for it; judged by git.
 */
let front: PublicAddress;
let work: string;
let configDir: string;
let gitConfig: string;
let cloneUrl: string;
let head: string;

const h = useTestApp(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-git-auth-'));
  configDir = path.join(work, 'wsp');
  gitConfig = path.join(work, 'gitconfig');
  fs.writeFileSync(gitConfig, '');
  front = await publicAddress();
  return {
    config: { publicUrl: front.url },
    setup: async () => {
      front.forwardTo(await h.app.listen({ port: 0, host: '127.0.0.1' }));
      const f = installFixture(h, s);
      const { install } = await f.installed({ who: 'git' });
      await h.app.jobs.runDue();
      ({ clone_url: cloneUrl, head_commit_sha: head } = await f.ok('GET', `/v1/installs/${install.id}/repository`));
      // Logged in as the member, in the workspace, as `wsp login` leaves it.
      writeCredentials({ server: front.url, token: s.member.session, user_id: s.member.userId, workspace: s.workspaceId }, { WSP_CONFIG_DIR: configDir });
    },
  };
});
const s = h.seeded;
after(async () => {
  await front.close();
  fs.rmSync(work, { recursive: true, force: true });
});

/** git with only the global config of this test (no system config, no prompt). */
function git(args: string[], cwd = work): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      {
        cwd,
        env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: gitConfig, GIT_TERMINAL_PROMPT: '0', WSP_CONFIG_DIR: configDir, LC_ALL: 'C' },
        timeout: 60_000,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr: stderr.trim() }),
    );
  });
}

test('before setup-git git cannot clone; after it, clone and fetch work with the login', async () => {
  const refused = await git(['clone', cloneUrl, path.join(work, 'before')]);
  assert.notEqual(refused.code, 0, 'no credential yet');
  assert.match(refused.stderr, /Authentication failed|could not read Username/);

  const setup = await runWsp(['auth', 'setup-git'], { WSP_CONFIG_DIR: configDir, GIT_CONFIG_GLOBAL: gitConfig, GIT_CONFIG_NOSYSTEM: '1', HOME: work });
  assert.equal(setup.code, 0, setup.stderr);
  const helper = (await git(['config', '--global', '--get', `credential.${new URL(front.url).origin}.helper`])).stdout;
  assert.match(helper, /auth git-credential$/);

  const dir = path.join(work, 'after');
  const clone = await git(['clone', '--quiet', cloneUrl, dir]);
  assert.equal(clone.code, 0, clone.stderr);
  assert.equal((await git(['rev-parse', 'main'], dir)).stdout, head);
  assert.equal(fs.readFileSync(path.join(dir, 'hello.txt'), 'utf8'), 'Hello git v1\n');
  assert.ok(!(await git(['config', '--get', 'remote.origin.url'], dir)).stdout.includes(s.member.session), 'the credential is not written into the clone');
  const fetch = await git(['fetch', '--quiet', 'origin'], dir);
  assert.equal(fetch.code, 0, fetch.stderr);
});

test('the helper answers only for the server logged in to, with the workspace as the user name', async () => {
  const host = new URL(front.url).host;
  const mine = await runCli(['auth', 'git-credential', 'get'], { configDir, stdin: `protocol=http\nhost=${host}\npath=v1/installs/x/repository.git\n\n` });
  assert.equal(mine.code, 0, mine.stderr);
  assert.equal(mine.stdout, `username=${s.workspaceId}\npassword=${s.member.session}\n`);
  for (const other of [`protocol=http\nhost=evil.example:80\n\n`, `protocol=https\nhost=${host}\n\n`]) {
    const answer = await runCli(['auth', 'git-credential', 'get'], { configDir, stdin: other });
    assert.equal(answer.code, 0);
    assert.equal(answer.stdout, '', `nothing for ${other.trim()}`);
  }
  assert.equal((await runCli(['auth', 'git-credential', 'store'], { configDir, stdin: 'protocol=http\n\n' })).stdout, '');
  assert.equal((await runCli(['auth', 'git-credential', 'steal'], { configDir })).code, 2);
});
