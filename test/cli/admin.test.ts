import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SignJWT, generateKeyPair, exportSPKI, type CryptoKey } from 'jose';
import { createTestApp, as, ENGINE, type TestApp } from '../helpers/harness.js';
import { adminJson, runWsp } from '../helpers/processes.js';

/**
 * CONTRACT §2 operator commands, run as a user runs them (`node bin/wsp.js admin ...` in a
 * subprocess) against the database of an app running in this process: what they write, the
 * app sees at once.
 */
const ISS = 'https://idp.cli.test';
const AUD = 'wsp';
let h: TestApp;
let jwtKey: CryptoKey;
before(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  jwtKey = pair.privateKey;
  h = await createTestApp({ config: { jwt: { publicKey: await exportSPKI(pair.publicKey), issuer: ISS, audience: AUD, jwksUrl: undefined } } });
});
after(() => h.close());

const admin = (...args: string[]) => adminJson(args, h.dbEnv);
const raw = (...args: string[]) => runWsp(['admin', ...args], h.dbEnv);
const me = (credential: string, workspaceId?: string) => h.app.inject({ method: 'GET', url: '/v1/me', headers: as(credential, workspaceId) });

describe('wsp admin bootstrap --json', () => {
  test('prints {workspace_id, user_id, session_token, api_token}, and they work against the app', async () => {
    const out = await admin('bootstrap');
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

  test('each run makes a new workspace', async () => {
    const a = await admin('bootstrap');
    const b = await admin('bootstrap');
    assert.notEqual(a.workspace_id, b.workspace_id);
    assert.equal((await me(a.session_token!, b.workspace_id)).statusCode, 403);
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
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setIssuer(ISS).setAudience(AUD).setSubject(subject).setExpirationTime(now + 300).sign(jwtKey);
    const res = await me(jwt);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().user.id, user_id);
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

  const cases: [string, () => string[], RegExp][] = [
    ['a bad role', () => ['member', 'add', '--workspace', ws, '--user', usr, '--role', 'superuser'], /role must be one of owner, admin, member/],
    ['an unknown user (member add)', () => ['member', 'add', '--workspace', ws, '--user', 'usr_00000000000000000000000000', '--role', 'member'], /unknown user/],
    ['an unknown workspace', () => ['member', 'add', '--workspace', 'ws_00000000000000000000000000', '--user', usr, '--role', 'member'], /unknown workspace/],
    ['an unknown user (session create)', () => ['session', 'create', '--user', 'usr_nobody'], /unknown user/],
    ['an unknown user (user link)', () => ['user', 'link', '--user', 'usr_nobody', '--subject', 's'], /unknown user/],
    ['a subject longer than a JWT sub may be (user link)', () => ['user', 'link', '--user', usr, '--subject', 's'.repeat(256)], /a JWT subject is at most 255/],
    ['a missing --role', () => ['member', 'add', '--workspace', ws, '--user', usr], /--role is required/],
    ['a flag without its value', () => ['workspace', 'create', '--name'], /--name needs a value/],
    ['an empty workspace name', () => ['workspace', 'create', '--name', ''], /non-empty --name/],
    ['a workspace name over 100 characters', () => ['workspace', 'create', '--name', 'n'.repeat(101)], /100 characters/],
    ['an unknown command', () => ['frobnicate'], /unknown admin command "frobnicate"/],
  ];
  for (const [why, args, message] of cases) {
    test(why, async () => {
      const res = await raw(...args(), '--json');
      assert.notEqual(res.code, 0, `${why}: exit ${res.code}`);
      assert.match(res.stderr, /^error: /);
      assert.match(res.stderr, message);
      assert.equal(res.stdout, '', 'nothing on stdout for a script to mistake for a result');
    });
  }

  test('nothing was written by the failed commands', async () => {
    const members = await h.database.db.selectFrom('memberships').select('user_id').where('workspace_id', '=', ws).execute();
    assert.deepEqual(members, []);
  });

  test('wsp admin --help exits 0 and lists every command', async () => {
    const res = await raw('--help');
    assert.equal(res.code, 0);
    for (const c of ['bootstrap', 'workspace create', 'user create', 'user link', 'member add', 'session create']) assert.ok(res.stdout.includes(c), c);
  });
});

test('an unreachable database is a one-line error and exit 1, not a stack trace', async () => {
  // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
  for (const url of ['postgres://wsp:hunter2@127.0.0.1:1/wsp', 'postgres://wsp@localhost:1/wsp']) {
    const res = await runWsp(['admin', 'user', 'create', '--json'], { DATABASE_URL: url, WSP_DATA_DIR: h.config.dataDir });
    assert.equal(res.code, 1, res.stderr);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^error: cannot open or migrate the database at postgres:\/\/wsp(:\*\*\*)?@(127\.0\.0\.1|localhost):1\/wsp: .*ECONNREFUSED/);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.ok(!res.stderr.includes('hunter2'), 'the password is not printed');
    assert.ok(!/\n\s+at /.test(res.stderr), 'no stack trace');
  }
});

test('on a fresh machine (an empty data directory or database schema) bootstrap creates and migrates the database', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-fresh-'));
  const env: Record<string, string> = { WSP_DATA_DIR: dir };
  const pgUrl = process.env.WSP_TEST_PG_URL;
  const schema = `fresh_${randomBytes(6).toString('hex')}`;
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
    assert.match((await adminJson(['user', 'create'], env)).user_id!, /^usr_/);
  } finally {
    // The schema is dropped with the others by scripts/test.mjs after the run.
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
