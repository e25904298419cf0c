import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { registerSecret } from '../helpers/log-scan.js';

/**
 * Issue 48, item 1, as the red team did it, against a real server process and the real OpenID
 * provider: any user makes a workspace, invites `newhire@corp.test`, accepts the invitation
 * without signing in (choosing a password), and leaves. When the real person later signs in by
 * single sign-on with that verified email, the sign-in used to land in the attacker's account,
 * whose password still worked, so that the company's invitation made the attacker an admin of
 * the company's workspace.
 */
const NEWHIRE = 'newhire@corp.test';
const ATTACKER_PASSWORD = 'the attacker chose this';

let tdb: TestDatabase;
let server: ServerProcess | undefined;
let pub: PublicAddress | undefined;
let idp: TestProvider | undefined;
let company: { workspace_id: string; session_token: string };
let attacker: { session_token: string };

before(async () => {
  tdb = await openTestDatabase();
  const admin = createAdminService(tdb.database.db, systemClock);
  company = await admin.bootstrap({ email: 'owner@corp.test' });
  const someone = await admin.createUser({ name: 'Someone', email: 'someone@elsewhere.test' });
  attacker = await admin.createSession(someone.user_id);
  registerSecret(company.session_token, attacker.session_token);
  pub = await publicAddress();
  idp = await startProvider(`${pub.url}/v1/auth/oidc/callback`);
  idp.accounts['newhire'] = { email: NEWHIRE, email_verified: true, name: 'The New Hire' };
  server = await startServer({ ...tdb.env, WSP_PUBLIC_URL: pub.url, WSP_OIDC_ISSUER: idp.issuer, WSP_OIDC_CLIENT_ID: idp.clientId, WSP_OIDC_CLIENT_SECRET: idp.clientSecret });
  pub.forwardTo(server.url);
});

after(async () => {
  if (server) await server.stop('SIGTERM', 5_000);
  await pub?.close();
  await idp?.close();
  if (tdb) await tdb.cleanup();
});

/** A browser's cookies for the platform, kept between requests. */
class Jar {
  private readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      if (value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

async function call(method: string, path: string, opts: { bearer?: string; jar?: Jar; workspace?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.workspace) headers['service-context'] = opts.workspace;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.jar) {
    headers.cookie = opts.jar.header();
    if (method !== 'GET' && opts.jar.get('wsp_session')) {
      const me = await fetch(`${pub!.url}/v1/me`, { headers: { cookie: opts.jar.header() } });
      headers['x-csrf-token'] = ((await me.json()) as { csrf_token: string }).csrf_token;
    }
  }
  const res = await fetch(`${pub!.url}${path}`, { method, headers, redirect: 'manual', ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  opts.jar?.take(res);
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {}, location: res.headers.get('location') };
}

/** Single sign-on as a browser does it: the start, the provider's pages, the callback with the browser's cookies. */
async function signOn(jar: Jar, accountId: string) {
  const start = await fetch(`${pub!.url}/v1/auth/oidc/start?return_to=/console/`, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(start);
  assert.equal(start.status, 302);
  const back = await idp!.signIn(String(start.headers.get('location')), accountId);
  const callback = await fetch(back, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(callback);
  return { status: callback.status, body: callback.status === 302 ? null : ((await callback.json()) as Record<string, any>) };
}

const secretOf = (url: string) => url.slice(url.indexOf('#') + 1);

test("the pre-takeover: the attacker's invitation-made account never receives the real person's single sign-on, loses the address, and never reaches the company", async () => {
  // The attacker: a workspace of their own, an invitation for the new hire's address, accepted signed out.
  const ws = await call('POST', '/v1/workspaces', { bearer: attacker.session_token, body: { name: 'Totally legit' } });
  assert.equal(ws.status, 201, JSON.stringify(ws.body));
  const invite = await call('POST', `/v1/workspaces/${ws.body.id}/invitations`, { bearer: attacker.session_token, workspace: ws.body.id, body: { email: NEWHIRE, role: 'admin' } });
  assert.equal(invite.status, 201, JSON.stringify(invite.body));
  const attackerBrowser = new Jar();
  const made = await call('POST', '/v1/invitations:accept', { jar: attackerBrowser, body: { token: secretOf(invite.body.url), name: 'New Hire', password: ATTACKER_PASSWORD } });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const preMade = made.body.user_id as string;
  // ... and leaves the workspace.
  const left = await call('DELETE', `/v1/workspaces/${ws.body.id}/members/${preMade}`, { jar: attackerBrowser, workspace: ws.body.id });
  assert.equal(left.status, 204, JSON.stringify(left.body));
  const meBefore = await call('GET', '/v1/me', { jar: attackerBrowser });
  assert.deepEqual([meBefore.body.user.email, meBefore.body.user.email_verified], [NEWHIRE, false], 'the address is held, unproven');

  // The company invites the real person, who signs in with single sign-on.
  const companyInvite = await call('POST', `/v1/workspaces/${company.workspace_id}/invitations`, {
    bearer: company.session_token,
    workspace: company.workspace_id,
    body: { email: NEWHIRE, role: 'admin' },
  });
  assert.equal(companyInvite.status, 201);
  const realBrowser = new Jar();
  const signed = await signOn(realBrowser, 'newhire');
  assert.equal(signed.status, 302, JSON.stringify(signed.body));
  const real = await call('GET', '/v1/me', { jar: realBrowser });
  assert.notEqual(real.body.user.id, preMade, 'single sign-on did not land in the pre-made account');
  assert.deepEqual([real.body.user.email, real.body.user.email_verified], [NEWHIRE, true]);

  // The attacker's password no longer signs in with the address.
  const pw = await call('POST', '/v1/sessions', { body: { email: NEWHIRE, password: ATTACKER_PASSWORD } });
  assert.equal(pw.status, 401);
  assert.equal((await call('GET', '/v1/me', { jar: attackerBrowser })).body.user.email, null);

  // The real person accepts the company's invitation: the company has them, not the attacker.
  const joined = await call('POST', '/v1/invitations:accept', { jar: realBrowser, body: { token: secretOf(companyInvite.body.url) } });
  assert.equal(joined.status, 200, JSON.stringify(joined.body));
  assert.equal(joined.body.user_id, real.body.user.id);
  const members = await call('GET', `/v1/workspaces/${company.workspace_id}/members`, { bearer: company.session_token, workspace: company.workspace_id });
  const ids = (members.body.data as { user_id: string }[]).map((m) => m.user_id);
  assert.ok(ids.includes(real.body.user.id) && !ids.includes(preMade), JSON.stringify(ids));
  const intoCompany = await call('GET', '/v1/me', { jar: attackerBrowser, workspace: company.workspace_id });
  assert.equal(intoCompany.status, 403, "the attacker's account has no way into the company");

  // The audit trail says what happened to the address.
  const events = await tdb.database.db.selectFrom('events').select(['type', 'resource_id', 'data']).where('type', '=', 'user.email_released').execute();
  assert.deepEqual(
    events.map((e) => [e.resource_id, JSON.parse(e.data).to_user_id]),
    [[preMade, real.body.user.id]],
  );
});
