import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { SignJWT, generateKeyPair, exportSPKI } from 'jose';
import { createTestApp, type TestApp } from '../helpers/harness.js';
import { createJwtVerifier } from '../../src/auth/jwt.js';
import { buildTenant, caller, leaked, type Call, type TenantFixture } from './tenant-fixture.js';

/**
 * CONTRACT §1-2, STYLE ("one shared cross-tenant test run against every route"): workspace A
 * holds one resource of every kind; every route of the OpenAPI document that takes a path id is
 * called with A's ids by every kind of caller that is not entitled to them. Each answer is the
 * rule's 404 (7002), 403 or 401, carries nothing of A in its body or headers, and A's resources
 * are exactly as they were afterwards. A route whose path ids this suite cannot map to a
 * resource of A fails the test, so no new route escapes it.
 */

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
const ISS = 'https://issuer.test';
const AUD = 'workspace-platform';

/** The collection a path id follows (literal segments before it) to the fixture kind of that id. */
const KIND_OF_COLLECTION: Record<string, string> = {
  workspaces: 'workspace',
  api_tokens: 'token',
  operations: 'operation',
  notifications: 'notification',
  secrets: 'secret',
  'secrets/versions': 'secretVersion',
  'compute/configs': 'computeConfig',
  machines: 'machine',
  'compute/suspensions': 'suspension',
  packages: 'package',
  'packages/versions': 'packageVersion',
  installs: 'install',
  renders: 'render',
  snippets: 'snippet',
  dashboards: 'dashboard',
  'dashboards/revisions': 'dashboardRevision',
};
/** Routes that need the owner or admin role (CONTRACT §2): 403 7023 for a member or an API token. */
const ROLE_ROUTES = new Set(['DELETE /v1/api_tokens/{id}', 'PATCH /v1/workspaces/{id}']);
/** Values of the required query parameters of a route (git's advertisement names its service). */
const QUERY_VALUES: Record<string, Record<string, string>> = {
  'GET /v1/installs/{id}/repository.git/info/refs': { service: 'git-upload-pack' },
};
/** User-scoped routes (CONTRACT §7): no workspace; an API token is 403 7024; unowned ids answer 204. */
const USER_ROUTES = new Set(['PATCH /v1/notifications/{id}/read']);

interface Operation {
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content?: Record<string, { schema?: { required?: string[] } }> };
  security?: unknown[];
}
interface Route {
  method: string;
  path: string;
  op: Operation;
  params: { name: string; kind: string }[];
}

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let h: TestApp;
let A: TenantFixture;
let B: TenantFixture;
let call: Call;
let routes: Route[];
let signingKey: KeyLike;
let otherKey: KeyLike;

before(async () => {
  const pair = await generateKeyPair('ES256');
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair('ES256')).privateKey;
  // The verifier judges exp by the app's clock (a test clock in 2026), like the rest of the app.
  const verifyJwt = await createJwtVerifier({ publicKey: await exportSPKI(pair.publicKey), issuer: ISS, audience: AUD }, { nowMs: () => h.clock.nowMs() });
  h = await createTestApp({ verifyJwt, logStream });
  A = await buildTenant(h, 'Alpha');
  B = await buildTenant(h, 'Beta');
  call = caller(h);
  const paths = (h.app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }).paths;
  routes = Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => ['get', 'post', 'patch', 'put', 'delete'].includes(m))
      .map(([m, op]) => ({ method: m.toUpperCase(), path, op, params: paramsOf(path) })),
  );
});
after(() => h.close());

/** Each `{param}` of a path with the fixture kind its collection names ('' when there is none). */
function paramsOf(path: string): { name: string; kind: string }[] {
  const segments = path.replace(/^\/v1\//, '').split('/');
  const literal: string[] = [];
  const out: { name: string; kind: string }[] = [];
  for (const seg of segments) {
    const m = /^\{([^}]+)\}/.exec(seg);
    if (m) out.push({ name: m[1]!, kind: KIND_OF_COLLECTION[literal.join('/')] ?? '' });
    else literal.push(seg.split(':')[0]!);
  }
  return out;
}

async function jwt(sub: string, opts: { iss?: string; aud?: string; key?: KeyLike } = {}): Promise<string> {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(opts.iss ?? ISS)
    .setAudience(opts.aud ?? AUD)
    .setSubject(sub)
    .setIssuedAt(now - 10)
    .setExpirationTime(now + 3600)
    .sign(opts.key ?? signingKey);
}

function unsignedJwt(sub: string): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: ISS, aud: AUD, sub, exp: Math.floor(h.clock.nowMs() / 1000) + 3600 })}.`;
}

/** A valid body for each write route that needs one (path ids aside, the request must pass validation). */
function bodyFor(route: Route): unknown {
  const key = `${route.method} ${route.path}`;
  const bodies: Record<string, unknown> = {
    'PATCH /v1/workspaces/{id}': { name: 'taken over' },
    'POST /v1/secrets/{id}/versions': { data: Buffer.from('planted').toString('base64') },
    'POST /v1/machines/{id}:suspend': {},
    'POST /v1/packages/{id}/versions': { semver: '9.9.9', files: { 'x.txt': 'planted' } },
    'PATCH /v1/installs/{id}': { values: { who: 'planted' } },
    'POST /v1/installs/{id}:restore': { render_id: A.ids.render },
    'PATCH /v1/snippets/{id}': { name: 'planted' },
    'PATCH /v1/dashboards/{id}': { name: 'planted' },
    'POST /v1/dashboards/{id}:reset': {},
    'POST /v1/dashboards/{id}/revisions/{revision_id}:restore': {},
    // git's own body (application/x-git-upload-pack-request): a bare flush, as git's probe sends.
    'POST /v1/installs/{id}/repository.git/git-upload-pack': Buffer.from('0000'),
  };
  if (key in bodies) return bodies[key];
  if (!route.op.requestBody) return undefined;
  const required = route.op.requestBody.content?.['application/json']?.schema?.required ?? [];
  assert.equal(required.length, 0, `${key}: the tenant-isolation suite has no valid body for this route; add one to bodyFor()`);
  return {};
}

function headersFor(route: Route): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const p of route.op.parameters ?? []) {
    if (p.in !== 'header' || !p.required) continue;
    if (p.name === 'if-match') headers['if-match'] = '*'; // would match any version, were the resource reachable
    else if (p.name === 'idempotency-key') headers['idempotency-key'] = `iso-${randomBytes(6).toString('hex')}`;
    else assert.fail(`${route.method} ${route.path}: required header ${p.name} unknown to the suite`);
  }
  // A body that is not JSON goes with the one media type the route documents.
  const media = Object.keys(route.op.requestBody?.content ?? {});
  if (media.length > 0 && !media.includes('application/json')) headers['content-type'] = media[0]!;
  return headers;
}

function queryOf(route: Route): string {
  const key = `${route.method} ${route.path}`;
  const pairs = (route.op.parameters ?? [])
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => {
      const value = QUERY_VALUES[key]?.[p.name];
      assert.ok(value !== undefined, `${key}: required query parameter ${p.name} unknown to the suite; add it to QUERY_VALUES`);
      return [p.name, value];
    });
  return new URLSearchParams(pairs).toString();
}

function urlOf(route: Route, idOf: (kind: string, index: number) => string): string {
  let url = route.path;
  route.params.forEach((p, i) => (url = url.replace(`{${p.name}}`, idOf(p.kind, i))));
  const query = queryOf(route);
  return query ? `${url}?${query}` : url;
}

interface Expect {
  status: number;
  code?: number;
}

function check(res: Awaited<ReturnType<Call>>, expected: Expect, where: string) {
  assert.equal(res.statusCode, expected.status, `${where}: ${res.statusCode} ${res.body}`);
  if (expected.code !== undefined) {
    const body = res.json();
    if (res.statusCode === 401 && body.errors?.length === 0) assert.equal(body._tag, 'Unauthorized', where);
    else assert.equal(body.errors?.[0]?.code, expected.code, `${where}: ${res.body}`);
  }
  const found = leaked(res, A.sensitive);
  assert.deepEqual(found, [], `${where}: A's data in the answer: ${found.join(', ')}\n${res.body}`);
}

/** What the owner of A can read through every GET route with path ids, to compare before and after. */
async function snapshotOfA(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of routes.filter((x) => x.method === 'GET' && x.params.length > 0)) {
    const url = urlOf(r, (kind) => A.ids[kind]!);
    const res = await call(A.seed.owner.session, A.seed.workspaceId, 'GET', url);
    assert.equal(res.statusCode, 200, `the fixture id works for its owner: GET ${url} -> ${res.statusCode} ${res.body}`);
    out.set(url, res.body);
  }
  for (const url of ['/v1/api_tokens?limit=100', '/v1/compute/suspensions', '/v1/notifications', '/v1/secrets', '/v1/installs', '/v1/dashboards', '/v1/snippets', '/v1/machines', '/v1/packages', '/v1/compute/configs']) {
    const res = await call(A.seed.owner.session, A.seed.workspaceId, 'GET', url);
    assert.equal(res.statusCode, 200, url);
    // last_used_at of A's own tokens moves when A uses them; nothing else may.
    out.set(url, res.body.replace(/"last_used_at":(\d+|null)/g, '"last_used_at":_'));
  }
  return out;
}

test('every route with path ids: no caller outside workspace A reaches a resource of A, and nothing of A leaks', async () => {
  const unmapped = routes.filter((r) => r.params.some((p) => !p.kind || !A.ids[p.kind])).map((r) => `${r.method} ${r.path}`);
  assert.deepEqual(unmapped, [], 'routes whose path ids the suite cannot map to a fixture of workspace A (extend KIND_OF_COLLECTION and buildTenant)');
  const targeted = routes.filter((r) => r.params.length > 0);
  assert.ok(targeted.length >= 40, `only ${targeted.length} routes with path ids`);
  for (const key of [...ROLE_ROUTES, ...USER_ROUTES]) assert.ok(targeted.some((r) => `${r.method} ${r.path}` === key), `${key} is no longer a route`);

  const now = Math.floor(h.clock.nowMs() / 1000);
  // Dead credentials of A: a revoked token, an expired token, a signed-out session.
  const revoked = (await call(A.seed.owner.session, A.seed.workspaceId, 'POST', '/v1/api_tokens', { name: 'revoked' })).json();
  assert.equal((await call(A.seed.owner.session, A.seed.workspaceId, 'DELETE', `/v1/api_tokens/${revoked.id}`)).statusCode, 204);
  const expiring = (await call(A.seed.owner.session, A.seed.workspaceId, 'POST', '/v1/api_tokens', { name: 'expiring', expires_at: now + 5 })).json();
  const { session_token: signedOut } = await h.admin.createSession(A.seed.owner.userId);
  assert.equal((await call(signedOut, undefined, 'DELETE', '/v1/sessions/current')).statusCode, 204);
  h.clock.advanceSeconds(10);
  const bJwt = await jwt(B.seed.owner.userId);
  assert.equal((await call(bJwt, B.seed.workspaceId, 'GET', '/v1/secrets')).statusCode, 200, "B's JWT works in B");
  const deadOfA: Record<string, string> = {
    'revoked token of A': revoked.token,
    'expired token of A': expiring.token,
    'signed-out session of A': signedOut,
    'JWT for A with a wrong issuer': await jwt(A.seed.owner.userId, { iss: 'https://evil.test' }),
    'JWT for A with a wrong audience': await jwt(A.seed.owner.userId, { aud: 'another-service' }),
    'JWT for A with a wrong signature': await jwt(A.seed.owner.userId, { key: otherKey }),
    'JWT for A with alg none': unsignedJwt(A.seed.owner.userId),
  };
  const before = await snapshotOfA();

  let calls = 0;
  for (const route of targeted) {
    const key = `${route.method} ${route.path}`;
    const role = ROLE_ROUTES.has(key);
    const user = USER_ROUTES.has(key);
    const url = urlOf(route, (kind) => A.ids[kind]!);
    const body = bodyFor(route);
    const send = async (name: string, credential: string, workspace: string | undefined, expected: Expect, target = url) => {
      const res = await call(credential, workspace, route.method, target, body, headersFor(route));
      check(res, expected, `${name}: ${route.method} ${target}`);
      calls++;
    };
    const hidden: Expect = user ? { status: 204 } : { status: 404, code: 7002 };
    await send("B's owner (session) in B", B.seed.owner.session, B.seed.workspaceId, hidden);
    await send("B's owner (JWT) in B", bJwt, B.seed.workspaceId, hidden);
    await send("B's admin in B", B.seed.admin.session, B.seed.workspaceId, hidden);
    await send("B's member in B", B.seed.member.session, B.seed.workspaceId, role ? { status: 403, code: 7023 } : hidden);
    await send("B's API token", B.seed.apiToken, undefined, user ? { status: 403, code: 7024 } : role ? { status: 403, code: 7023 } : hidden);
    await send("B's owner naming A in Service-Context", B.seed.owner.session, A.seed.workspaceId, user ? hidden : { status: 403, code: 7022 });
    await send("A's API token naming B in Service-Context", A.seed.apiToken, B.seed.workspaceId, user ? { status: 403, code: 7024 } : { status: 403, code: 7022 });
    if (role) await send("A's member in A", A.seed.member.session, A.seed.workspaceId, { status: 403, code: 7023 });
    for (const [name, credential] of Object.entries(deadOfA)) await send(name, credential, A.seed.workspaceId, { status: 401, code: 7010 });
    // A path that starts in B and ends in A: the child must be found under its parent only.
    if (route.params.length > 1) {
      const mixed = urlOf(route, (kind, i) => (i === route.params.length - 1 ? A.ids[kind]! : B.ids[kind]!));
      await send("B's owner, B's parent with A's child", B.seed.owner.session, B.seed.workspaceId, { status: 404, code: 7002 }, mixed);
      const reversed = urlOf(route, (kind, i) => (i === route.params.length - 1 ? B.ids[kind]! : A.ids[kind]!));
      await send("B's owner, A's parent with B's child", B.seed.owner.session, B.seed.workspaceId, { status: 404, code: 7002 }, reversed);
    }
  }
  assert.ok(calls > targeted.length * 10, `${calls} calls`);

  const afterwards = await snapshotOfA();
  for (const [url, body] of before) assert.equal(afterwards.get(url), body, `A's resource changed: ${url}`);
  // A's unread notification stayed unread; A's credentials still work.
  const notices = (await call(A.seed.owner.session, undefined, 'GET', '/v1/notifications?unread=true')).json();
  assert.deepEqual(notices.data.map((n: { id: string }) => n.id), [A.ids.notification]);
  assert.equal((await call(A.token.token, undefined, 'GET', '/v1/api_tokens')).statusCode, 200);
});

test("ids of A inside request bodies are not found for B either (404 at the field), and nothing is made", async () => {
  const ctx = B.seed.workspaceId;
  const owner = B.seed.owner.session;
  const cases: { name: string; method: string; url: string; body: unknown; headers?: Record<string, string>; path: string[] }[] = [
    { name: 'install of A package', method: 'POST', url: '/v1/installs', body: { name: 'x1', package_id: A.ids.package, version_id: A.ids.packageVersion }, path: ['body', 'package_id'] },
    { name: 'install of B package with A version', method: 'POST', url: '/v1/installs', body: { name: 'x2', package_id: B.ids.package, version_id: A.ids.packageVersion }, path: ['body', 'version_id'] },
    { name: 'PATCH to A version', method: 'PATCH', url: `/v1/installs/${B.ids.install}`, body: { desired_version_id: A.ids.packageVersion }, headers: { 'if-match': '*' }, path: ['body', 'desired_version_id'] },
    { name: 'restore of A render', method: 'POST', url: `/v1/installs/${B.ids.install}:restore`, body: { render_id: A.ids.render }, headers: { 'if-match': '*', 'idempotency-key': 'iso-restore' }, path: ['body', 'render_id'] },
    { name: 'machine on A config', method: 'POST', url: '/v1/machines', body: { compute_config_id: A.ids.computeConfig, server_type: 'cx22' }, path: ['body', 'compute_config_id'] },
    { name: 'machine in A cluster', method: 'POST', url: '/v1/machines', body: { compute_config_id: B.ids.computeConfig, server_type: 'cx22', cluster_id: A.ids.cluster }, path: ['body', 'cluster_id'] },
    { name: 'config with A secret', method: 'POST', url: '/v1/compute/configs', body: { name: 'x', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', secret_id: A.ids.secret }, path: ['body', 'secret_id'] },
    {
      name: 'dashboard pinning A snippet',
      method: 'POST',
      url: '/v1/dashboards',
      body: { name: 'x', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [{ ...snippetPin(A.ids.snippet!), widget_id: 'w1' }] },
      path: ['body', 'widgets', '0', 'snippet_id'],
    },
  ];
  const before = (await call(owner, ctx, 'GET', `/v1/installs/${B.ids.install}`)).json();
  for (const c of cases) {
    for (const [who, credential, workspace] of [
      ['owner', owner, ctx],
      ['token', B.seed.apiToken, undefined],
    ] as const) {
      const key = c.headers?.['idempotency-key'];
      const res = await call(credential, workspace, c.method, c.url, c.body, { ...c.headers, ...(key ? { 'idempotency-key': `${key}-${who}` } : {}) });
      const where = `${c.name} (${who})`;
      assert.equal(res.statusCode, 404, `${where}: ${res.body}`);
      const e = res.json().errors[0];
      assert.equal(e.code, 7002, where);
      assert.deepEqual(e.path, c.path, where);
      // The id was sent by the caller; nothing else of A may come back.
      const sent = A.ids[kindOf(c.body, c.path)]!;
      const found = leaked(res, A.sensitive, [sent, bare(sent)]);
      assert.deepEqual(found, [], `${where}: ${found.join(', ')}`);
    }
  }
  const afterwards = (await call(owner, ctx, 'GET', `/v1/installs/${B.ids.install}`)).json();
  assert.deepEqual(afterwards, before, "B's install is unchanged");
  for (const url of ['/v1/installs', '/v1/machines', '/v1/compute/configs', '/v1/dashboards']) {
    const list = (await call(owner, ctx, 'GET', url)).json();
    assert.equal(list.data.length, 1, `nothing was made in ${url}`);
  }
});

test('every list and user route answers B without any of A', async () => {
  const lists = routes.filter((r) => r.method === 'GET' && r.params.length === 0 && !(Array.isArray(r.op.security) && r.op.security.length === 0));
  assert.ok(lists.length >= 12, `${lists.length} list routes`);
  for (const r of lists) {
    for (const [who, credential, workspace] of [
      ['owner in B', B.seed.owner.session, B.seed.workspaceId],
      ['owner, no Service-Context', B.seed.owner.session, undefined],
      ['token', B.seed.apiToken, undefined],
    ] as const) {
      const res = await call(credential, workspace, 'GET', r.path);
      assert.ok([200, 403].includes(res.statusCode), `${who}: GET ${r.path} -> ${res.statusCode} ${res.body}`);
      const found = leaked(res, A.sensitive);
      assert.deepEqual(found, [], `${who}: GET ${r.path}: ${found.join(', ')}`);
    }
  }
});

test("the log of everything above holds none of A's or B's credentials or secret payloads", () => {
  assert.ok(lines.length > 500, `${lines.length} log lines`);
  const needles = [...A.credentials, ...B.credentials];
  const hits = lines.filter((l) => needles.some((n) => l.includes(n)));
  assert.deepEqual(hits, []);
});

function snippetPin(snippetId: string) {
  return {
    widget_type: 'snippet',
    position: 0,
    title: null,
    col_span: 1,
    height: 'compact',
    drill_down: null,
    visualization_options: {},
    freshness_policy: { mode: 'provider_default' },
    snippet_id: snippetId,
    snippet_etag: 'x',
    input_bindings: {},
    visualization: null,
    refresh_policy: { mode: 'on_load' },
    display_type: null,
  };
}

const bare = (id: string) => id.slice(id.indexOf('_') + 1);

/** The fixture kind of the id a body case sends at `path`. */
function kindOf(body: unknown, path: string[]): string {
  let v: unknown = body;
  for (const p of path.slice(1)) v = (v as Record<string, unknown>)[p];
  const id = String(v);
  const kind = Object.entries(A.ids).find(([, x]) => x === id)?.[0];
  assert.ok(kind, `no fixture id ${id}`);
  return kind;
}
