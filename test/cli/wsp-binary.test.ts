import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { ROOT } from '../../scripts/sdk-generate.js';
import { removeTempConfigDirs, tempConfigDir, userCodeIn } from './cli-harness.js';

/**
 * The real `wsp` binary (bin/wsp.js, the built dist/) in subprocesses, against a real
 * `wsp serve` on the test's database: login approved from the test, tokens, secrets, --json.
 */
const BIN = path.join(ROOT, 'bin/wsp.js');
let s: Seed;
let url: string;
let server: ServerProcess | undefined;
let configDir: string;
/**
 * WSP_PUBLIC_URL, which the server puts in the device login's verification URI (the one the CLI
 * prints): an address of its own rather than the server's, which is known only once it listens
 * (port 0), and nothing here opens it.
 */
const PUBLIC_URL = 'https://wsp.example.test';

/** Only what the commands need, so nothing of the developer's own setup leaks in. */
const baseEnv = () => ({ PATH: process.env.PATH ?? '', HOME: configDir });

const h = useTestApp({
  seed: false,
  setup: async () => {
    // The server runs on real time: the seeded sessions must be fresh by it.
    h.clock.set(Date.now());
    s = await h.seed();
    configDir = tempConfigDir();
    // On port 0: the address is read back from the server's 'listening' line.
    server = await startServer({ ...h.dbEnv, WSP_PUBLIC_URL: PUBLIC_URL, WSP_MASTER_KEY: h.config.masterKey! });
    url = server.url;
  },
  teardown: async () => {
    await server?.stop('SIGTERM');
    removeTempConfigDirs();
  },
});

interface Result {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs `wsp <argv>`; `onStderr` sees the error stream as it grows. */
function wsp(argv: string[], opts: { stdin?: Buffer; env?: Record<string, string>; onStderr?: (text: string) => void } = {}): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: { ...baseEnv(), WSP_CONFIG_DIR: configDir, WSP_SERVER: url, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let err = '';
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
    opts.onStderr?.(err);
  });
  child.stdin.end(opts.stdin ?? Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`wsp ${argv.join(' ')} hung; stderr: ${err}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
  });
}

const json = (r: Result) => JSON.parse(r.stdout.toString());

test('wsp login (approved from the test), then tokens and secrets round trips with --json', async () => {
  let approval: Promise<Response> | undefined;
  const login = await wsp(['login', '--json'], {
    onStderr: (text) => {
      const code = userCodeIn(text);
      if (code && !approval) {
        approval = fetch(`${url}/v1/oauth/device/approve`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.owner.session}`, 'content-type': 'application/json' },
          body: JSON.stringify({ user_code: code }),
        });
      }
    },
  });
  assert.equal((await approval)?.status, 200);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stderr, new RegExp(`open ${PUBLIC_URL.replace(/\./g, '\\.')}/device\n`));
  assert.deepEqual(json(login), { server: url, user_id: s.owner.userId, workspace: s.workspaceId, credentials_file: path.join(configDir, 'credentials.json') });
  assert.equal(fs.statSync(path.join(configDir, 'credentials.json')).mode & 0o777, 0o600);

  const who = await wsp(['whoami', '--json']);
  assert.equal(who.code, 0, who.stderr);
  assert.equal(json(who).user.id, s.owner.userId);
  assert.equal(json(who).workspace.id, s.workspaceId);

  // Tokens: create, list, revoke.
  const created = await wsp(['tokens', 'create', '--name', 'from-cli', '--json']);
  assert.equal(created.code, 0, created.stderr);
  const token = json(created);
  assert.match(token.token, /^sk_svc_[0-9A-Za-z]{38}$/);
  assert.ok(json(await wsp(['tokens', 'list', '--json'])).data.some((t: { id: string }) => t.id === token.id));
  assert.equal((await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token.token}` } })).status, 200);
  const revoked = await wsp(['tokens', 'revoke', token.id, '--json', '--yes']);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.deepEqual(json(revoked), { id: token.id, revoked: true });
  assert.ok(!json(await wsp(['tokens', 'list', '--json'])).data.some((t: { id: string }) => t.id === token.id));
  assert.equal((await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token.token}` } })).status, 401);

  // Secrets: a payload piped in comes back byte for byte.
  const secret = json(await wsp(['secrets', 'create', 'cli-secret', '--json']));
  assert.match(secret.id, /^sec_/);
  const payload = Buffer.from('line one\n\u0000binary\xff', 'latin1');
  const added = await wsp(['secrets', 'add-version', secret.id, '--json'], { stdin: payload });
  assert.equal(added.code, 0, added.stderr);
  const version = json(added);
  const accessed = await wsp(['secrets', 'access', secret.id, version.id]);
  assert.equal(accessed.code, 0, accessed.stderr);
  assert.deepEqual(accessed.stdout, payload);
  assert.equal(json(await wsp(['secrets', 'disable', secret.id, version.id, '--json'])).state, 'disabled');
  assert.equal((await wsp(['secrets', 'access', secret.id, version.id])).code, 1);
  assert.equal(json(await wsp(['secrets', 'enable', secret.id, version.id, '--json'])).state, 'enabled');
  assert.equal(json(await wsp(['secrets', 'destroy', secret.id, version.id, '--json', '--yes'])).state, 'destroyed');

  const logout = await wsp(['logout']);
  assert.equal(logout.code, 0, logout.stderr);
  const after = await wsp(['whoami']);
  assert.equal(after.code, 3);
});

test('the binary’s exit codes: usage 2, server down 4', async () => {
  assert.equal((await wsp(['tokens', 'create'])).code, 2);
  assert.equal((await wsp(['--help'])).code, 0);
  // No server at the address: a port of 127.0.0.1 on which nothing listens, so connections are
  // refused, held by this process as the local end of a connection it keeps open, so no other
  // process can start listening on it meanwhile (as one could on a probed port once closed).
  const peer = net.createServer();
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  const holder = net.connect((peer.address() as net.AddressInfo).port, '127.0.0.1');
  try {
    await new Promise<void>((resolve, reject) => holder.once('connect', resolve).once('error', reject));
    const down = await wsp(['login', '--server', `http://127.0.0.1:${holder.localPort}`]);
    assert.equal(down.code, 4, down.stderr);
    assert.match(down.stderr, /cannot reach the server .*\(ECONNREFUSED\)/);
    assert.ok(!/at .*\.js:\d+/.test(down.stderr), 'no stack trace');
  } finally {
    holder.destroy();
    await new Promise((resolve) => peer.close(resolve));
  }
});
