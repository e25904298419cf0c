import { test, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { SignJWT, generateKeyPair, exportSPKI, type CryptoKey } from 'jose';
import { as, ENGINE } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { adminJson, adminJsonOf, runWsp, wspEnv, type RunResult } from '../helpers/processes.js';
import { runAdmin } from '../../src/cli/admin.js';

/**
 * docs/spec-gaps.md, "Credentials and tokens" operator commands against the database of an app running in this process: what
 * they write, the app sees at once. Each behaviour only a real process shows (its exit code, the
 * one JSON line on stdout, creating and migrating a database on a fresh machine, an unreachable
 * database as one line and no stack trace) is checked by running `node bin/wsp.js admin ...` as a
 * user does; the rest runs `runAdmin`, what that binary calls, in this process: a process start
 * and a migration check per command was most of this file's time.
 */
const ISS = 'https://idp.cli.test';
const AUD = 'wsp';
let jwtKey: CryptoKey;
const h = useTestApp(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  jwtKey = pair.privateKey;
  return {
    config: { jwt: { publicKey: await exportSPKI(pair.publicKey), issuer: ISS, audience: AUD, jwksUrl: undefined } },
    seed: false,
  };
});

/** `wsp admin ...args` in this process, with the environment the binary would get (and `stdin` piped in). */
async function inProcess(args: string[], env: Record<string, string> = h.dbEnv, stdin = ''): Promise<RunResult> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d) => (stdout += d));
  err.on('data', (d) => (stderr += d));
  const input = new PassThrough();
  input.end(stdin);
  const code = await runAdmin(args, out, err, wspEnv(env), input);
  return { code, stdout, stderr };
}

const inProcessStdin = (args: string[], stdin: string) => inProcess(args, h.dbEnv, stdin);

/** An admin command with --json in this process: its one JSON object (as adminJson gives the binary's). */
async function inProcessJson(args: string[], env: Record<string, string> = h.dbEnv): Promise<Record<string, string>> {
  return adminJsonOf(args, await inProcess([...args, '--json'], env));
}

const admin = (...args: string[]) => inProcessJson(args);
const raw = (...args: string[]) => inProcess(args);
const me = (credential: string, workspaceId?: string) => h.app.inject({ method: 'GET', url: '/v1/me', headers: as(credential, workspaceId) });

describe('wsp admin bootstrap --json', () => {
  test('prints {workspace_id, user_id, session_token, api_token}, and they work against the app', async () => {
    // The binary: exit 0 and exactly one JSON line on stdout (adminJson checks both).
    const out = await adminJson(['bootstrap'], h.dbEnv);
    assert.deepEqual(Object.keys(out).sort(), ['api_token', 'session_token', 'user_id', 'workspace_id']);
    assert.match(out.workspace_id!, /^ws_[0-9a-z]{26}$/);
    assert.match(out.user_id!, /^usr_[0-9a-z]{26}$/);
    assert.match(out.session_token!, /^[A-Za-z0-9]{32}$/);
    assert.match(out.api_token!, /^sk_svc_[0-9A-Za-z]{38}$/);

    const bySession = await me(out.session_token!, out.workspace_id);
    assert.equal(bySession.statusCode, 200, bySession.body);
    assert.equal(bySession.json().user.id, out.user_id);
    assert.equal(bySession.json().role, 'owner');
    const byToken = await me(out.api_token!);
    assert.equal(byToken.statusCode, 200);
    assert.equal(byToken.json().workspace.id, out.workspace_id);
    const created = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(out.session_token!, out.workspace_id), payload: { name: 'from-cli-owner' } });
    assert.equal(created.statusCode, 201);
  });

  test('once the database has a user it refuses (exit 1, one line) unless --force, which makes another workspace', async () => {
    const refused = await raw('bootstrap');
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, 'error: the database already has users: bootstrap is for the first run (--force makes another workspace and owner anyway)\n');
    const a = await admin('bootstrap', '--force');
    const b = await admin('bootstrap', '--force');
    assert.notEqual(a.workspace_id, b.workspace_id);
    assert.equal((await me(a.session_token!, b.workspace_id)).statusCode, 403);
  });

  test('--email and --password-stdin give the owner a way to sign in; a bad password or a lone --password-stdin is refused', async () => {
    const email = `owner-${randomBytes(3).toString('hex')}@example.com`;
    const out = await inProcessStdin(['bootstrap', '--force', '--email', email, '--password-stdin', '--json'], 'the owner password 1\n');
    assert.equal(out.code, 0, out.stderr);
    const signIn = await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email, password: 'the owner password 1' } });
    assert.equal(signIn.statusCode, 201, signIn.body);
    assert.equal(signIn.json().user_id, JSON.parse(out.stdout).user_id);
    const short = await inProcessStdin(['bootstrap', '--force', '--email', `x${email}`, '--password-stdin'], 'short\n');
    assert.equal(short.code, 1);
    assert.match(short.stderr, /a password is 12-256 characters; this one is 5/);
    assert.equal((await inProcessStdin(['bootstrap', '--force', '--password-stdin'], 'whatever password\n')).code, 2);
  });

  test('user set-password reads the password from stdin; the user signs in with it', async () => {
    const email = `set-${randomBytes(3).toString('hex')}@example.com`;
    const { user_id } = await admin('user', 'create', '--name', 'Pat', '--email', email);
    const set = await inProcessStdin(['user', 'set-password', '--user', user_id!, '--json'], 'a brand new password');
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout), { user_id, password_set: true });
    assert.equal((await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email, password: 'a brand new password' } })).statusCode, 201);
    assert.equal((await inProcessStdin(['user', 'set-password', '--user', 'usr_unknown'], 'a brand new password')).code, 1);
  });
});

describe('workspace, user, member, session, link', () => {
  test('workspace create, user create, member add, session create: a member with that role', async () => {
    const { workspace_id } = await admin('workspace', 'create', '--name', 'Made by CLI');
    assert.match(workspace_id!, /^ws_/);
    const { user_id } = await admin('user', 'create', '--name', 'Ada', '--email', 'ada@example.test');
    assert.match(user_id!, /^usr_/);
    const row = await h.database.db.selectFrom('users').selectAll().where('id', '=', user_id!).executeTakeFirstOrThrow();
    assert.equal(row.name, 'Ada');
    assert.equal(row.email, 'ada@example.test');

    const added = await admin('member', 'add', '--workspace', workspace_id!, '--user', user_id!, '--role', 'admin');
    assert.deepEqual(added, { workspace_id, user_id, role: 'admin' });
    const { session_token } = await admin('session', 'create', '--user', user_id!);
    assert.match(session_token!, /^[A-Za-z0-9]{32}$/);
    const res = await me(session_token!, workspace_id);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().role, 'admin');
    assert.equal(res.json().workspace.name, 'Made by CLI');

    // member add again changes the role.
    await admin('member', 'add', '--workspace', workspace_id!, '--user', user_id!, '--role', 'member');
    assert.equal((await me(session_token!, workspace_id)).json().role, 'member');
  });

  test('user link: a JWT whose sub is the linked subject acts as the user', async () => {
    const { user_id } = await admin('user', 'create', '--name', 'Linked');
    const subject = 'github|12345';
    const linked = await admin('user', 'link', '--user', user_id!, '--subject', subject);
    assert.deepEqual(linked, { user_id, subject });
    const now = Math.floor(h.clock.nowMs() / 1000);
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setSubject(subject)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(jwtKey);
    const res = await me(jwt);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().user.id, user_id);
  });

  test('session revoke --session, --user --all; member remove: the tokens and the membership stop working at once', async () => {
    const { workspace_id } = await admin('workspace', 'create', '--name', 'Leaving');
    const { user_id } = await admin('user', 'create', '--name', 'Leaver');
    await admin('member', 'add', '--workspace', workspace_id!, '--user', user_id!, '--role', 'member');
    const tokens = [];
    for (let i = 0; i < 3; i++) tokens.push((await admin('session', 'create', '--user', user_id!)).session_token!);
    const listed = (await h.app.inject({ method: 'GET', url: '/v1/sessions', headers: as(tokens[0]!) })).json().data as Array<{ id: string; current: boolean }>;
    const one = listed.find((x) => x.current)!.id;
    assert.deepEqual(await admin('session', 'revoke', '--session', one), { session_id: one, revoked: 1 });
    assert.equal((await me(tokens[0]!)).statusCode, 401);
    assert.equal((await me(tokens[1]!, workspace_id)).statusCode, 200);
    assert.deepEqual(await admin('member', 'remove', '--workspace', workspace_id!, '--user', user_id!), { workspace_id, user_id, removed: true });
    assert.equal((await me(tokens[1]!, workspace_id)).statusCode, 403, 'no longer a member');
    assert.deepEqual(await admin('session', 'revoke', '--user', user_id!, '--all'), { user_id, revoked: 2 });
    assert.equal((await me(tokens[2]!)).statusCode, 401);
  });

  test('without --json the output is readable key: value lines', async () => {
    const res = await raw('user', 'create', '--name', 'Plain');
    assert.equal(res.code, 0);
    assert.match(res.stdout, /^user_id: usr_[0-9a-z]{26}\n$/);
  });
});

describe('clear errors and a non-zero exit', () => {
  let ws: string;
  let usr: string;
  before(async () => {
    ws = (await admin('workspace', 'create', '--name', 'Errors'))['workspace_id']!;
    usr = (await admin('user', 'create'))['user_id']!;
  });

  // [why, arguments, message, exit code: 1 for a refused command, 2 for a usage error]
  const cases: [string, () => string[], RegExp, number][] = [
    ['a bad role', () => ['member', 'add', '--workspace', ws, '--user', usr, '--role', 'superuser'], /role must be one of owner, admin, member/, 1],
    ['an unknown user (member add)', () => ['member', 'add', '--workspace', ws, '--user', 'usr_00000000000000000000000000', '--role', 'member'], /unknown user/, 1],
    ['an unknown workspace', () => ['member', 'add', '--workspace', 'ws_00000000000000000000000000', '--user', usr, '--role', 'member'], /unknown workspace/, 1],
    ['an unknown user (session create)', () => ['session', 'create', '--user', 'usr_nobody'], /unknown user/, 1],
    ['an unknown user (user link)', () => ['user', 'link', '--user', 'usr_nobody', '--subject', 's'], /unknown user/, 1],
    ['a subject longer than a JWT sub may be (user link)', () => ['user', 'link', '--user', usr, '--subject', 's'.repeat(256)], /a JWT subject is at most 255/, 1],
    ['a missing --role', () => ['member', 'add', '--workspace', ws, '--user', usr], /--role is required/, 2],
    ['a flag without its value', () => ['workspace', 'create', '--name'], /--name needs a value/, 2],
    ['a flag the command does not take', () => ['workspace', 'create', '--name', 'X', '--role', 'owner'], /unknown flag --role/, 2],
    ['a misspelt flag', () => ['session', 'create', '--usr', usr], /unknown flag --usr/, 2],
    ['a value given to a boolean flag', () => ['workspace', 'create', '--name', 'X', '--json=yes'], /--json takes no value/, 2],
    ['an empty workspace name', () => ['workspace', 'create', '--name', ''], /non-empty --name/, 1],
    ['a workspace name over 100 characters', () => ['workspace', 'create', '--name', 'n'.repeat(101)], /100 characters/, 1],
    ['an unknown command', () => ['frobnicate'], /unknown admin command "frobnicate"/, 2],
    ['session revoke with neither --session nor --user --all', () => ['session', 'revoke'], /--session SES, or --user USR --all/, 2],
    ['session revoke --user without --all', () => ['session', 'revoke', '--user', usr], /--session SES, or --user USR --all/, 2],
    ['session revoke with both', () => ['session', 'revoke', '--session', 'ses_x', '--user', usr, '--all'], /--session SES, or --user USR --all/, 2],
    ['an unknown session', () => ['session', 'revoke', '--session', 'ses_00000000000000000000000000'], /unknown session/, 1],
    ['member remove of someone not a member', () => ['member', 'remove', '--workspace', ws, '--user', usr], /is not a member/, 1],
  ];
  const refused = (res: RunResult, why: string, message: RegExp, code: number) => {
    assert.notEqual(res.code, 0, `${why}: exit ${res.code}`);
    assert.equal(res.code, code, `${why}: ${res.stderr}`);
    assert.match(res.stderr, /^error: /);
    assert.match(res.stderr, message);
    assert.equal(res.stdout, '', 'nothing on stdout for a script to mistake for a result');
  };
  for (const [why, args, message, code] of cases) {
    test(why, async () => {
      refused(await raw(...args(), '--json'), why, message, code);
    });
  }

  test('the binary exits with that code: 1 for a refused command, 2 for a usage error', async () => {
    // One of each kind, as a real process: the code is what the shell sees.
    for (const [why, args, message, code] of [cases[0]!, cases[6]!]) {
      refused(await runWsp(['admin', ...args(), '--json'], h.dbEnv), why, message, code);
    }
  });

  test('nothing was written by the failed commands', async () => {
    const members = await h.database.db.selectFrom('memberships').select('user_id').where('workspace_id', '=', ws).execute();
    assert.deepEqual(members, []);
  });

  test('wsp admin --help exits 0 and lists every command', async () => {
    const res = await raw('--help');
    assert.equal(res.code, 0);
    for (const c of ['bootstrap', 'workspace create', 'user create', 'user link', 'member add', 'session create', 'backup --to', 'restore --from']) assert.ok(res.stdout.includes(c), c);
  });
});

test('an unreachable database is a one-line error and exit 1, not a stack trace', async () => {
  // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
  const unreachable = (res: RunResult) => {
    assert.equal(res.code, 1, res.stderr);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^error: cannot open or migrate the database at postgres:\/\/wsp(:\*\*\*)?@(127\.0\.0\.1|localhost):1\/wsp: .*ECONNREFUSED/);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.ok(!res.stderr.includes('hunter2'), 'the password is not printed');
    assert.ok(!/\n\s+at /.test(res.stderr), 'no stack trace');
  };
  const urls = ['postgres://wsp:hunter2@127.0.0.1:1/wsp', 'postgres://wsp@localhost:1/wsp'];
  for (const url of urls) unreachable(await inProcess(['user', 'create', '--json'], { DATABASE_URL: url, WSP_DATA_DIR: h.config.dataDir }));
  // The binary: what reaches the terminal is that line alone, nothing the process adds on its way out.
  unreachable(await runWsp(['admin', 'user', 'create', '--json'], { DATABASE_URL: urls[0]!, WSP_DATA_DIR: h.config.dataDir }));
});

test('on a fresh machine (an empty data directory or database schema) bootstrap creates and migrates the database', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-fresh-'));
  const env: Record<string, string> = { WSP_DATA_DIR: dir };
  const pgUrl = process.env.WSP_TEST_PG_URL;
  // Prefixed with the run's id, so scripts/test.mjs drops it with the run's other schemas.
  const schema = `t_${process.env.WSP_TEST_RUN_ID ?? ''}fresh_${randomBytes(6).toString('hex')}`;
  if (ENGINE === 'postgres') {
    // An empty schema of a database whose other schemas (other tests) hold migrated tables:
    // the migrator must look for its tables in this one.
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    const url = new URL(pgUrl!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  try {
    const out = await adminJson(['bootstrap'], env);
    assert.match(out.api_token!, /^sk_svc_/);
    if (ENGINE === 'sqlite') assert.ok(fs.existsSync(path.join(dir, 'wsp.sqlite')));
    else {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      const { rows } = await c.query(`select count(*)::int as n from ${schema}.api_tokens`);
      const migrations = await c.query(`select count(*)::int as n from ${schema}.kysely_migration`);
      await c.end();
      assert.equal(rows[0].n, 1);
      assert.ok(migrations.rows[0].n >= 1);
    }
    // A second command on the now-migrated database works too.
    assert.match((await inProcessJson(['user', 'create'], env)).user_id!, /^usr_/);
  } finally {
    // The schema is dropped with the others by scripts/test.mjs after the run.
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
