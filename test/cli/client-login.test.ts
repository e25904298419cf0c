import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { removeTempConfigDirs, runCli, tempConfigDir, userCodeIn } from './cli-harness.js';

/** `wsp login`, `whoami`, `logout` in process, against a listening server whose clock the test moves. */
let server: string;
const h = useTestApp({
  setup: async () => {
    server = await h.app.listen({ port: 0, host: '127.0.0.1' });
  },
  teardown: async () => {
    removeTempConfigDirs();
  },
});
const s = h.seeded;

const approve = (credential: string, userCode: string, decision: 'approve' | 'deny' = 'approve') =>
  h.app.inject({ method: 'POST', url: `/v1/oauth/device/${decision}`, headers: as(credential), payload: { user_code: userCode } });

/** A login that the given user approves during the client's first wait. */
async function loginAs(credential: string, configDir = tempConfigDir(), extra: string[] = [], terminal = false) {
  const waits: number[] = [];
  const run = await runCli(['login', '--server', server, ...extra], {
    configDir,
    terminal,
    onSleep: async (ms, stderr) => {
      waits.push(ms);
      if (waits.length === 1) assert.equal((await approve(credential, userCodeIn(stderr)!)).statusCode, 200);
      h.clock.advanceSeconds(ms / 1000);
    },
  });
  return { run, waits, configDir };
}

describe('wsp login', () => {
  test('shows the code and URL, waits the interval, saves a 0600 credential, and --json says who', async () => {
    const dir = tempConfigDir();
    // An existing directory open to others is closed (0700) before a credential goes in.
    fs.chmodSync(dir, 0o755);
    const { run, waits, configDir } = await loginAs(s.owner.session, dir, ['--json']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /To sign in, open http:\/\/localhost:8080\/device/);
    assert.match(run.stderr, /enter the code: [BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}/);
    assert.deepEqual(waits, [5000], 'one wait of the interval before the first poll');
    const out = JSON.parse(run.stdout);
    assert.equal(out.user_id, s.owner.userId);
    assert.equal(out.workspace, s.workspaceId, 'the only workspace is chosen');
    assert.equal(out.server, server);

    const file = path.join(configDir, 'credentials.json');
    assert.equal(out.credentials_file, file);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.statSync(configDir).mode & 0o077, 0, 'the directory is not open to others');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(saved.token) });
    assert.equal(me.json().credential.kind, 'session');

    const who = await runCli(['whoami'], { configDir });
    assert.equal(who.code, 0);
    assert.match(who.stdout, new RegExp(`workspace: +Acme \\(${s.workspaceId}\\)`));
    assert.match(who.stdout, /role: +owner/);
  });

  test('in a terminal, a spinner on stderr while waiting; stdout keeps only the result', async () => {
    const { run } = await loginAs(s.owner.session, tempConfigDir(), [], true);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting/);
    assert.doesNotMatch(run.stdout, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]|\x1b/);
    const piped = await loginAs(s.owner.session, tempConfigDir());
    assert.doesNotMatch(piped.run.stderr, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/, 'no spinner when stderr is not a terminal');
  });

  test('honours slow_down: after one, every wait is 5 s longer', async () => {
    const waits: number[] = [];
    const run = await runCli(['login', '--server', server], {
      configDir: tempConfigDir(),
      onSleep: async (ms, stderr) => {
        waits.push(ms);
        // The second wait runs short (a timer firing early): the server answers slow_down.
        h.clock.advanceSeconds(waits.length === 2 ? 2 : ms / 1000);
        if (waits.length === 3) assert.equal((await approve(s.admin.session, userCodeIn(stderr)!)).statusCode, 200);
      },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(waits, [5000, 5000, 10000]);
  });

  test('a second login replaces the first, whose session is revoked', async () => {
    const first = await loginAs(s.member.session);
    const oldToken = JSON.parse(fs.readFileSync(path.join(first.configDir, 'credentials.json'), 'utf8')).token;
    const second = await loginAs(s.member.session, first.configDir);
    assert.equal(second.run.code, 0, second.run.stderr);
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(oldToken) })).statusCode, 401);
  });

  test('denied in the browser: exit 1, nothing saved', async () => {
    const configDir = tempConfigDir();
    const run = await runCli(['login', '--server', server], {
      configDir,
      onSleep: async (ms, stderr) => {
        await approve(s.member.session, userCodeIn(stderr)!, 'deny');
        h.clock.advanceSeconds(ms / 1000);
      },
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /denied/);
    assert.ok(!fs.existsSync(path.join(configDir, 'credentials.json')));
  });

  test('nobody approves before the code expires: exit 1', async () => {
    const run = await runCli(['login', '--server', server], { configDir: tempConfigDir(), onSleep: () => h.clock.advanceSeconds(901) });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /expired/);
  });

  test('a server that is down: a clear message and exit 4', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise((r) => closed.close(r));
    const run = await runCli(['login', '--server', `http://127.0.0.1:${port}`], { configDir: tempConfigDir() });
    assert.equal(run.code, 4);
    assert.match(run.stderr, new RegExp(`cannot reach the server at http://127.0.0.1:${port} \\(ECONNREFUSED\\)`));
  });

  test('a bad --server is a usage error (2)', async () => {
    for (const bad of ['not a url', 'ftp://example.com']) {
      const run = await runCli(['login', '--server', bad], { configDir: tempConfigDir() });
      assert.equal(run.code, 2, bad);
      assert.match(run.stderr, /--server must be an http\(s\) URL/);
    }
  });
});

describe('wsp whoami and logout', () => {
  test('not logged in: exit 3', async () => {
    const run = await runCli(['whoami'], { configDir: tempConfigDir() });
    assert.equal(run.code, 3);
    assert.match(run.stderr, /not logged in/);
  });

  test('a session revoked elsewhere: exit 3 with a hint to log in', async () => {
    const { configDir } = await loginAs(s.member.session);
    const token = JSON.parse(fs.readFileSync(path.join(configDir, 'credentials.json'), 'utf8')).token;
    assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(token) })).statusCode, 204);
    const run = await runCli(['whoami', '--json'], { configDir });
    assert.equal(run.code, 3);
    assert.match(run.stderr, /wsp login/);
  });

  test('logout revokes the session on the server and deletes the file; again is a no-op', async () => {
    const { configDir } = await loginAs(s.member.session);
    const file = path.join(configDir, 'credentials.json');
    const token = JSON.parse(fs.readFileSync(file, 'utf8')).token;
    const run = await runCli(['logout', '--json'], { configDir });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { logged_out: true, server });
    assert.ok(!fs.existsSync(file));
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(token) })).statusCode, 401);
    const again = await runCli(['logout'], { configDir });
    assert.equal(again.code, 0);
    assert.match(again.stdout, /Not logged in/);
  });

  test('a damaged credentials file: exit 3, not a crash', async () => {
    const configDir = tempConfigDir();
    fs.writeFileSync(path.join(configDir, 'credentials.json'), '{"server": 5');
    const run = await runCli(['whoami'], { configDir });
    assert.equal(run.code, 3);
    assert.match(run.stderr, /damaged/);
  });
});
