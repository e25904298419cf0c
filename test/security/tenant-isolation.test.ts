import { TOKEN_SCOPES } from '../../src/auth/scopes.js';
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { SignJWT, generateKeyPair, exportSPKI } from 'jose';
import { useTestApp } from '../helpers/test-app.js';
import { createJwtVerifier } from '../../src/auth/jwt.js';
import { startLogin } from '../oauth/device-helpers.js';
import { buildTenant, caller, documentRoutes, leaked, noStream, type Call, type DocRoute, type TenantFixture } from './tenant-fixture.js';

/**
 * docs/spec-gaps.md, "Conventions"-2, STYLE ("one shared cross-tenant test run against every route"), issue 9.2:
 * workspace A holds one resource of every kind; EVERY route of the OpenAPI document is called
 * by every kind of attacker the issue lists: credentials of another workspace (B's owner by
 * session and by JWT, admin, member, API token), another workspace's Service-Context (B's
 * callers naming A, A's token naming B), a member or an API token without the role, and A's
 * dead credentials (revoked token, expired token, signed-out session, JWTs with a wrong issuer,
 * audience or signature, `alg: none`, expired). Each answer is the rule's (401 7010, 403
 * 7022/7023/7024, 404 7002; on user-scoped and public routes the caller's own answer), carries
 * nothing of A in its body or headers, the log lines of those requests hold nothing of A, and
 * A's resources are exactly as they were afterwards. A route the suite does not know how to
 * attack (a path id it cannot map to a resource of A, a route without path ids missing from
 * SCOPE_OF, a body it cannot make) fails the test, so no new route escapes it.
 */

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
const ISS = 'https://issuer.test';
const AUD = 'workspace-platform';

/** Routes that need the owner or admin role (docs/spec-gaps.md, "Credentials and tokens"): 403 7023 for a member or an API token. */
const ROLE_ROUTES = new Set([
  'POST /v1/api_tokens',
  'DELETE /v1/api_tokens/{id}',
  'PATCH /v1/workspaces/{id}',
  'PATCH /v1/workspaces/{id}/members/{user_id}',
  // DELETE .../members/{user_id} is not here: anyone may remove themselves (test/accounts/members.test.ts).
  'POST /v1/workspaces/{id}/invitations',
  'DELETE /v1/workspaces/{id}/invitations/{inv}',
]);
/** Routes any member may call but no API token (403 7023): a change request's approval is a person's (docs/spec-gaps.md, "Repository change requests"). */
const PERSON_ROUTES = new Set(['POST /v1/repository_change_requests/{id}:approve']);
/**
 * Routes users call as owner or admin (a member: 403 7023) and API tokens by their scope (docs/spec-gaps.md, "Events and the audit log"): the audit log, webhooks, pending invitations (members:read, issue 48),
 * and the irreversible deletions (docs/spec-gaps.md, "Roles (issue 50)").
 */
const MANAGER_ROUTES = new Set([
  'GET /v1/workspaces/{id}/invitations',
  'GET /v1/audit_events',
  'POST /v1/webhooks',
  'GET /v1/webhooks',
  'GET /v1/webhooks/{id}',
  'PATCH /v1/webhooks/{id}',
  'DELETE /v1/webhooks/{id}',
  'POST /v1/webhooks/{id}:test',
  'GET /v1/webhooks/{id}/deliveries',
  'GET /v1/webhooks/{id}/deliveries/{did}/attempts',
  'POST /v1/webhooks/{id}/deliveries/{did}:retry',
  'DELETE /v1/secrets/{id}',
  'POST /v1/secrets/{id}/versions/{vid}:destroy',
  'DELETE /v1/machines/{id}',
  'DELETE /v1/compute/configs/{id}',
  'DELETE /v1/clusters/{id}',
  'DELETE /v1/installs/{id}',
  'DELETE /v1/packages/{id}',
]);
/** Values of the required query parameters of a route (git's advertisement names its service). */
const QUERY_VALUES: Record<string, Record<string, string>> = {
  'GET /v1/installs/{id}/repository.git/info/refs': { service: 'git-upload-pack' },
};
/** User-scoped routes with path ids (docs/spec-gaps.md, "Notifications"): no workspace; an API token is 403 7024; unowned ids answer 204. */
const USER_ROUTES = new Set(['PATCH /v1/notifications/{id}/read', 'DELETE /v1/sessions/{id}']);
/**
 * How each route without path ids relates to workspaces (the route's `scope`): `workspace`
 * (Service-Context names the workspace, 403 7022 for one the caller is not in), `any` (the
 * workspace is optional), `user` (acts for the user: no workspace, 403 7024 for an API token),
 * `public` (no credential), `optional` (a credential is checked when sent). Every such route of
 * the document must be here.
 */
const SCOPE_OF: Record<string, 'workspace' | 'any' | 'user' | 'public' | 'optional'> = {
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'GET /metrics': 'public',
  'GET /license': 'public',
  'GET /.well-known/oauth-authorization-server': 'public',
  'POST /v1/oauth/device_authorization': 'public',
  'POST /v1/oauth/token': 'public',
  'GET /v1/me': 'any',
  'GET /v1/workspaces': 'any',
  'POST /v1/workspaces': 'user',
  'POST /v1/sessions': 'public',
  'GET /v1/auth/providers': 'public',
  'POST /v1/setup': 'public',
  'GET /v1/setup': 'public',
  'GET /v1/auth/oidc/start': 'public',
  'GET /v1/auth/oidc/callback': 'public',
  // A credential is optional: a live one of any workspace gets what the anonymous caller gets
  // (an unknown invitation secret is 404 for all), a dead one 401.
  'POST /v1/invitations:accept': 'optional',
  'DELETE /v1/sessions/current': 'user',
  'GET /v1/sessions': 'user',
  'GET /v1/notifications': 'user',
  'GET /v1/notifications/stream': 'user',
  'GET /v1/me/events': 'user',
  'POST /v1/oauth/device/approve': 'user',
  'POST /v1/oauth/device/deny': 'user',
  'POST /v1/api_tokens': 'workspace',
  'GET /v1/api_tokens': 'workspace',
  'GET /v1/platform_metrics': 'workspace',
  'GET /v1/platform_metrics/writes/series': 'workspace',
  'POST /v1/secrets': 'workspace',
  'GET /v1/secrets': 'workspace',
  'POST /v1/compute/configs': 'workspace',
  'GET /v1/compute/configs': 'workspace',
  'POST /v1/machines': 'workspace',
  'GET /v1/machines': 'workspace',
  'GET /v1/compute/suspensions': 'workspace',
  'GET /v1/compute/catalog': 'workspace',
  'GET /v1/regions': 'workspace',
  'GET /v1/regions/fsn1': 'workspace',
  'POST /v1/clusters': 'workspace',
  'GET /v1/clusters': 'workspace',
  'GET /v1/audit_events': 'workspace',
  'POST /v1/webhooks': 'workspace',
  'GET /v1/webhooks': 'workspace',
  'POST /v1/packages': 'workspace',
  'GET /v1/packages': 'workspace',
  'POST /v1/installs': 'workspace',
  'GET /v1/installs': 'workspace',
  'GET /v1/repository_change_requests': 'workspace',
  'POST /v1/snippets': 'workspace',
  'GET /v1/snippets': 'workspace',
  'POST /v1/dashboards': 'workspace',
  'GET /v1/dashboards': 'workspace',
};

type Route = DocRoute;

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let A: TenantFixture;
let B: TenantFixture;
let call: Call;
let routes: Route[];
let signingKey: KeyLike;
let otherKey: KeyLike;

const h = useTestApp(async () => {
  const pair = await generateKeyPair('ES256');
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair('ES256')).privateKey;
  // The verifier judges exp by the app's clock (a test clock in 2026), like the rest of the app.
  const verifyJwt = await createJwtVerifier({ publicKey: await exportSPKI(pair.publicKey), issuer: ISS, audience: AUD }, { nowMs: () => h.clock.nowMs() });
  return {
    verifyJwt,
    logStream,
    seed: false,
    setup: async () => {
      A = await buildTenant(h, 'Alpha');
      B = await buildTenant(h, 'Beta');
      call = caller(h);
      routes = documentRoutes(h);
    },
  };
});

async function jwt(sub: string, opts: { iss?: string; aud?: string; key?: KeyLike; exp?: number } = {}): Promise<string> {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(opts.iss ?? ISS)
    .setAudience(opts.aud ?? AUD)
    .setSubject(sub)
    .setIssuedAt(now - 10)
    .setExpirationTime(opts.exp ?? now + 3600)
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
    'PATCH /v1/workspaces/{id}/members/{user_id}': { role: 'member' },
    'POST /v1/invitations:accept': { token: 'inv_not_one_of_anybody', name: 'Planted', password: 'a planted password' },
    'POST /v1/workspaces': { name: 'planted' },
    // A new address each time: the per-account limit of failed sign-ins is not what is tested here.
    'POST /v1/sessions': { email: `planted-${randomBytes(4).toString('hex')}@example.com`, password: 'a planted password' },
    'POST /v1/setup': { code: 'AAAA-BBBB-CCCC', email: 'planted@example.com', name: 'Planted', password: 'a planted password', workspace_name: 'Planted' },
    'POST /v1/workspaces/{id}/invitations': { email: 'planted@example.com', role: 'owner' },
    'POST /v1/secrets/{id}/versions': { data: Buffer.from('planted').toString('base64') },
    'POST /v1/machines/{id}:suspend': {},
    'POST /v1/packages/{id}/versions': { semver: '9.9.9', files: { 'x.txt': 'planted' } },
    'PATCH /v1/installs/{id}': { values: { who: 'planted' } },
    'POST /v1/installs/{id}:restore': { render_id: A.ids.render },
    'PATCH /v1/repository_change_requests/{id}': { title: 'planted' },
    'POST /v1/repository_change_requests/{id}:merge': {},
    'PATCH /v1/snippets/{id}': { name: 'planted' },
    'PATCH /v1/dashboards/{id}': { name: 'planted' },
    'POST /v1/dashboards/{id}:reset': {},
    'POST /v1/dashboards/{id}/revisions/{revision_id}:restore': {},
    // git's own body (application/x-git-upload-pack-request): a bare flush, as git's probe sends.
    'POST /v1/installs/{id}/repository.git/git-upload-pack': Buffer.from('0000'),
    // Creations: valid bodies (naming A's resources where a field names one), so only the
    // workspace and role rules can refuse them.
    'POST /v1/api_tokens': { name: 'planted token' },
    'POST /v1/secrets': { name: `planted-${randomBytes(4).toString('hex')}` },
    'POST /v1/compute/configs': { name: 'planted', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04' },
    'POST /v1/machines': { compute_config_id: A.ids.computeConfig, server_type: 'cx22' },
    'POST /v1/clusters': { name: `planted-${randomBytes(4).toString('hex')}`, region: 'fsn1' },
    'PATCH /v1/clusters/{id}': { name: 'planted' },
    'POST /v1/packages': { name: `planted-${randomBytes(4).toString('hex')}` },
    'POST /v1/installs': { name: `planted-${randomBytes(4).toString('hex')}`, package_id: A.ids.package, version_id: A.ids.packageVersion },
    'POST /v1/snippets': { name: 'planted', source: 'select 1' },
    'POST /v1/dashboards': { name: 'planted', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] },
    'POST /v1/webhooks': { url: 'https://93.184.216.34/planted', event_types: ['secret.*'] },
    'PATCH /v1/webhooks/{id}': { description: 'planted' },
    // A fresh device login's user code is sent instead (see send()); this one names none.
    'POST /v1/oauth/device/approve': { user_code: 'ABCD-EFGH' },
    'POST /v1/oauth/device/deny': { user_code: 'ABCD-EFGH' },
    'POST /v1/oauth/device_authorization': { client_id: 'wsp-cli' },
    'POST /v1/oauth/token': { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'wsp-cli', device_code: 'not-a-device-code' },
  };
  if (key in bodies) return bodies[key];
  if (!route.op.requestBody) return undefined;
  const required = route.op.requestBody.content?.['application/json']?.schema?.required ?? [];
  assert.equal(required.length, 0, `${key}: the tenant-isolation suite has no valid body for this route; add one to bodyFor()`);
  return {};
}

function headersFor(route: Route): Record<string, string> {
  const headers: Record<string, string> = noStream(route);
  for (const p of route.op.parameters ?? []) {
    if (p.in !== 'header' || !p.required) continue;
    if (p.name === 'if-match')
      headers['if-match'] = '*'; // would match any version, were the resource reachable
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
  assert.equal(res.statusCode, expected.status, `${where}: ${res.statusCode} ${res.body.slice(0, 400)}`);
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
  // Every list of the document (with the largest page), so anything made in A shows.
  const lists = routes.filter((r) => r.method === 'GET' && r.params.length === 0 && (SCOPE_OF[r.key] === 'workspace' || SCOPE_OF[r.key] === 'user') && !isStream(r));
  assert.ok(lists.length >= 10, `${lists.length} lists`);
  for (const r of lists) {
    const limit = r.op.parameters?.find((p) => p.in === 'query' && p.name === 'limit');
    const url = limit ? `${r.path}?limit=${(limit.schema?.maximum as number | undefined) ?? 100}` : r.path;
    const res = await call(A.seed.owner.session, A.seed.workspaceId, 'GET', url);
    assert.equal(res.statusCode, 200, url);
    // last_used_at of A's own tokens moves when A uses them; nothing else may. The audit log
    // records the snapshot's own reads of secret payloads (A's owner): only those may be new.
    const ownReads = (e: { type: string; actor: { id: string | null } }) => e.type === 'secret_version.accessed' && e.actor.id === A.seed.owner.userId;
    const body = r.path === '/v1/audit_events' ? JSON.stringify({ ...res.json(), data: res.json().data.filter((e: Parameters<typeof ownReads>[0]) => !ownReads(e)) }) : res.body;
    out.set(url, body.replace(/"last_used_at":(\d+|null)/g, '"last_used_at":_'));
  }
  return out;
}

/** The attacker kinds of the matrix, in its column order. */
const KINDS = [
  'B-owner',
  'B-jwt',
  'B-admin',
  'B-member',
  'B-token',
  'B-owner@A',
  'B-jwt@A',
  'B-admin@A',
  'B-member@A',
  'B-token@A',
  'A-token@B',
  'A-member',
  'A-token',
  'revoked-token',
  'expired-token',
  'signed-out-session',
  'jwt-wrong-issuer',
  'jwt-wrong-audience',
  'jwt-wrong-signature',
  'jwt-alg-none',
  'jwt-expired',
] as const;
type Kind = (typeof KINDS)[number];
const LEGEND =
  "B-x: a caller of workspace B (no Service-Context for the token, B otherwise); B-x@A: naming A in Service-Context; A-token@B: A's token naming B; " +
  "A-member, A-token: A's own member or token on a route that needs a role or a user; the rest: A's dead credentials, with A's Service-Context";

interface Cell {
  status: number;
  code: number | undefined;
}
/** route key -> attacker kind -> answer: the matrix the suite prints. */
const matrix = new Map<string, Map<Kind, Cell>>();
/** Request ids of every attacker request, with what the attacker itself sent of A (its path ids). */
const attackRequests = new Map<string, string[]>();

function record(route: Route, kind: Kind, res: Awaited<ReturnType<Call>>) {
  let row = matrix.get(route.key);
  if (!row) matrix.set(route.key, (row = new Map()));
  let code: number | undefined;
  try {
    code = res.json()?.errors?.[0]?.code;
  } catch {
    code = undefined;
  }
  row.set(kind, { status: res.statusCode, code });
}

test('every route of the document, every attacker kind: refused by the rule, nothing of A in answers or log lines, A unchanged', async (t: TestContext) => {
  const unmapped = routes.filter((r) => r.params.some((p) => !p.kind || !A.ids[p.kind])).map((r) => r.key);
  assert.deepEqual(unmapped, [], 'routes whose path ids the suite cannot map to a fixture of workspace A (extend KIND_OF_COLLECTION and buildTenant)');
  const unknown = routes.filter((r) => r.params.length === 0 && !SCOPE_OF[r.key]).map((r) => r.key);
  assert.deepEqual(unknown, [], 'routes without path ids the suite does not know how to attack (add them to SCOPE_OF)');
  assert.ok(routes.filter((r) => r.params.length > 0).length >= 40, 'routes with path ids');
  for (const key of [...ROLE_ROUTES, ...MANAGER_ROUTES, ...USER_ROUTES, ...Object.keys(SCOPE_OF)])
    assert.ok(
      routes.some((r) => r.key === key),
      `${key} is no longer a route`,
    );

  const now = Math.floor(h.clock.nowMs() / 1000);
  // Dead credentials of A: a revoked token, an expired token, a signed-out session.
  const revoked = (await call(A.seed.owner.session, A.seed.workspaceId, 'POST', '/v1/api_tokens', { name: 'revoked' })).json();
  assert.equal((await call(A.seed.owner.session, A.seed.workspaceId, 'DELETE', `/v1/api_tokens/${revoked.id}`)).statusCode, 204);
  const expiring = (await call(A.seed.owner.session, A.seed.workspaceId, 'POST', '/v1/api_tokens', { name: 'expiring', expires_at: now + 5 })).json();
  const { session_token: signedOut } = await h.admin.createSession(A.seed.owner.userId);
  assert.equal((await call(signedOut, undefined, 'DELETE', '/v1/sessions/current')).statusCode, 204);
  const expiredJwt = await jwt(A.seed.owner.userId, { exp: now + 5 });
  h.clock.advanceSeconds(10);
  const bJwt = await jwt(B.seed.owner.userId);
  assert.equal((await call(bJwt, B.seed.workspaceId, 'GET', '/v1/secrets')).statusCode, 200, "B's JWT works in B");
  const dead: Partial<Record<Kind, string>> = {
    'revoked-token': revoked.token,
    'expired-token': expiring.token,
    'signed-out-session': signedOut,
    'jwt-wrong-issuer': await jwt(A.seed.owner.userId, { iss: 'https://evil.test' }),
    'jwt-wrong-audience': await jwt(A.seed.owner.userId, { aud: 'another-service' }),
    'jwt-wrong-signature': await jwt(A.seed.owner.userId, { key: otherKey }),
    'jwt-alg-none': unsignedJwt(A.seed.owner.userId),
    'jwt-expired': expiredJwt,
  };
  const snapshot = await snapshotOfA();

  const bUser = { 'B-owner': B.seed.owner, 'B-admin': B.seed.admin, 'B-member': B.seed.member } as const;
  let n = 0;
  for (const route of routes) {
    const role = ROLE_ROUTES.has(route.key);
    const manager = MANAGER_ROUTES.has(route.key);
    const personOnly = PERSON_ROUTES.has(route.key);
    const scope = route.params.length > 0 ? (USER_ROUTES.has(route.key) ? 'user' : 'workspace') : SCOPE_OF[route.key]!;
    const url = urlOf(route, (kind) => A.ids[kind]!);
    const sentOfA = route.params.flatMap((p) => [A.ids[p.kind]!, A.ids[p.kind]!.slice(A.ids[p.kind]!.indexOf('_') + 1)]);

    /** Sends the route as one attacker; `expected` undefined: not an attack for this route. */
    const send = async (kind: Kind, credential: string, workspace: string | undefined, expected: Expect, target = url) => {
      let body = bodyFor(route);
      if (route.key === 'POST /v1/oauth/device/approve' || route.key === 'POST /v1/oauth/device/deny') body = { user_code: (await startLogin(h)).user_code };
      const requestId = `atk-${++n}`;
      attackRequests.set(requestId, sentOfA);
      const res = await call(credential, workspace, route.method, target, body, { ...headersFor(route), 'x-request-id': requestId });
      check(res, expected, `${kind}: ${route.method} ${target}`);
      record(route, kind, res);
    };
    // DELETE /v1/sessions/current revokes the calling session: each session caller gets one of its own.
    const sessionOf = async (member: { userId: string; session: string }) =>
      route.key === 'DELETE /v1/sessions/current' ? (await h.admin.createSession(member.userId)).session_token : member.session;

    if (scope === 'public' || scope === 'optional') {
      // No credential is needed: every attacker gets the anonymous answer, with nothing of A.
      const body = bodyFor(route);
      const anonymous = await h.app.inject({ method: route.method as 'GET', url, headers: headersFor(route), ...(body === undefined ? {} : { payload: body as object }) });
      const same: Expect = { status: anonymous.statusCode };
      for (const kind of ['B-owner', 'B-jwt', 'B-token', 'B-owner@A', 'A-token@B'] as const) {
        const credential = { 'B-owner': B.seed.owner.session, 'B-jwt': bJwt, 'B-token': B.seed.apiToken, 'B-owner@A': B.seed.owner.session, 'A-token@B': A.seed.apiToken }[kind];
        await send(kind, credential, kind.endsWith('@A') ? A.seed.workspaceId : kind.endsWith('@B') ? B.seed.workspaceId : undefined, same);
      }
      for (const [kind, credential] of Object.entries(dead)) await send(kind as Kind, credential, A.seed.workspaceId, scope === 'optional' ? { status: 401, code: 7010 } : same);
      continue;
    }

    // B's callers in B (or with no workspace): another workspace's resources do not exist for them.
    const own: Expect | undefined =
      scope === 'workspace'
        ? route.params.length > 0
          ? { status: 404, code: 7002 }
          : undefined // B acting on its own collection: not an attack (the list test checks B's lists)
        : scope === 'user'
          ? route.key === 'DELETE /v1/sessions/{id}'
            ? { status: 404, code: 7002 } // another user's session: as unknown as a made-up id
            : { status: route.params.length > 0 ? 204 : ownStatus(route) }
          : { status: 200 }; // any: /v1/me, /v1/workspaces answer for B
    if (own) {
      for (const kind of ['B-owner', 'B-admin', 'B-member'] as const) {
        const member = bUser[kind];
        const expected = kind === 'B-member' && (role || manager) ? { status: 403, code: 7023 } : own;
        await send(kind, await sessionOf(member), scope === 'workspace' ? B.seed.workspaceId : undefined, expected);
      }
      // A JWT is not a session: DELETE /v1/sessions/current refuses it (403 7020).
      await send('B-jwt', bJwt, scope === 'workspace' ? B.seed.workspaceId : undefined, route.key === 'DELETE /v1/sessions/current' ? { status: 403, code: 7020 } : own);
      const tokenExpected: Expect = scope === 'user' ? { status: 403, code: 7024 } : role || personOnly ? { status: 403, code: 7023 } : own;
      await send('B-token', B.seed.apiToken, undefined, tokenExpected);
    }
    // Another workspace named in Service-Context.
    const bNamingA: Expect = scope === 'user' ? own! : { status: 403, code: 7022 };
    for (const kind of ['B-owner@A', 'B-admin@A', 'B-member@A'] as const) {
      const member = bUser[kind.slice(0, -2) as 'B-owner' | 'B-admin' | 'B-member'];
      const expected = scope === 'user' && kind === 'B-member@A' ? own! : bNamingA;
      await send(kind, await sessionOf(member), A.seed.workspaceId, expected);
    }
    await send('B-jwt@A', bJwt, A.seed.workspaceId, route.key === 'DELETE /v1/sessions/current' ? { status: 403, code: 7020 } : bNamingA);
    await send('B-token@A', B.seed.apiToken, A.seed.workspaceId, scope === 'user' ? { status: 403, code: 7024 } : { status: 403, code: 7022 });
    await send('A-token@B', A.seed.apiToken, B.seed.workspaceId, scope === 'user' ? { status: 403, code: 7024 } : { status: 403, code: 7022 });
    // A's own callers without the role (or without a user).
    if (role || manager) await send('A-member', A.seed.member.session, A.seed.workspaceId, { status: 403, code: 7023 });
    if (role || personOnly || scope === 'user') await send('A-token', A.seed.apiToken, undefined, { status: 403, code: role || personOnly ? 7023 : 7024 });
    // A's dead credentials, with A's Service-Context: 401 before anything else.
    for (const [kind, credential] of Object.entries(dead)) await send(kind as Kind, credential, A.seed.workspaceId, { status: 401, code: 7010 });
    // A path that starts in B and ends in A (and the reverse): the child is found under its parent only.
    if (route.params.length > 1) {
      const mixed = urlOf(route, (kind, i) => (i === route.params.length - 1 ? A.ids[kind]! : B.ids[kind]!));
      const res1 = await call(B.seed.owner.session, B.seed.workspaceId, route.method, mixed, bodyFor(route), headersFor(route));
      check(res1, { status: 404, code: 7002 }, `B's parent with A's child: ${route.method} ${mixed}`);
      const reversed = urlOf(route, (kind, i) => (i === route.params.length - 1 ? B.ids[kind]! : A.ids[kind]!));
      const res2 = await call(B.seed.owner.session, B.seed.workspaceId, route.method, reversed, bodyFor(route), headersFor(route));
      check(res2, { status: 404, code: 7002 }, `A's parent with B's child: ${route.method} ${reversed}`);
    }
  }

  // The matrix: one line per route (attacker kind=status/code), then the count per attacker kind.
  t.diagnostic(`tenant isolation: ${routes.length} routes x ${KINDS.length} attacker kinds; ${LEGEND}`);
  for (const route of routes) {
    const row = matrix.get(route.key);
    assert.ok(row && row.size > 0, `${route.key} was not attacked`);
    t.diagnostic(
      `isolation ${route.key}: ${KINDS.filter((k) => row.has(k))
        .map((k) => `${k}=${row.get(k)!.status}${row.get(k)!.code ? `/${row.get(k)!.code}` : ''}`)
        .join(' ')}`,
    );
  }
  for (const kind of KINDS) {
    const cells = routes.map((r) => matrix.get(r.key)?.get(kind)).filter((c): c is Cell => c !== undefined);
    const counts = new Map<string, number>();
    for (const c of cells) counts.set(`${c.status}${c.code ? `/${c.code}` : ''}`, (counts.get(`${c.status}${c.code ? `/${c.code}` : ''}`) ?? 0) + 1);
    t.diagnostic(`isolation kind ${kind}: ${cells.length} routes; ${[...counts].map(([k, v]) => `${k}x${v}`).join(' ')}`);
  }

  const afterwards = await snapshotOfA();
  for (const [url, body] of snapshot) assert.equal(afterwards.get(url), body, `A's resource changed: ${url}`);
  // A's unread notification stayed unread; A's credentials still work.
  const notices = (await call(A.seed.owner.session, undefined, 'GET', '/v1/notifications?unread=true')).json();
  assert.deepEqual(
    notices.data.map((x: { id: string }) => x.id),
    [A.ids.notification],
  );
  assert.equal((await call(A.token.token, undefined, 'GET', '/v1/api_tokens')).statusCode, 200);

  // The log lines of the attackers' requests hold nothing of A but the ids the attacker sent.
  const attackLines = lines.filter((l) => {
    const id = /"reqId":"(atk-\d+)"/.exec(l)?.[1];
    return id !== undefined && attackRequests.has(id);
  });
  assert.ok(attackLines.length >= attackRequests.size, `${attackLines.length} log lines for ${attackRequests.size} attacker requests`);
  const hits = attackLines.flatMap((l) => {
    const sent = attackRequests.get(/"reqId":"(atk-\d+)"/.exec(l)![1]!)!;
    return A.sensitive.filter((x) => !sent.includes(x) && l.includes(x)).map((x) => `${x} in ${l.slice(0, 300)}`);
  });
  assert.deepEqual(hits, [], "A's data in the log lines of B's requests");
  t.diagnostic(`isolation logs: ${attackRequests.size} attacker requests, ${attackLines.length} log lines, nothing of A in them`);
});

/** What a user-scoped route without path ids answers B's own callers (their own data, never A's). */
/** A route answering a stream (Server-Sent Events) rather than a JSON document: no list to compare. */
function isStream(route: Route): boolean {
  const ok = route.op.responses['200'] as { content?: Record<string, unknown> } | undefined;
  return ok?.content?.['text/event-stream'] !== undefined;
}

function ownStatus(route: Route): number {
  switch (route.key) {
    case 'DELETE /v1/sessions/current':
      return 204;
    // The suite asks a stream for JSON (noStream): it is refused rather than held open.
    case 'GET /v1/notifications/stream':
      return 406;
    case 'POST /v1/workspaces':
      return 201;
    case 'GET /v1/notifications':
    case 'GET /v1/me/events':
    case 'GET /v1/sessions':
    case 'POST /v1/oauth/device/approve':
    case 'POST /v1/oauth/device/deny':
      return 200;
    default:
      assert.fail(`${route.key}: the suite does not know what this user-scoped route answers its caller`);
  }
}

test('ids of A inside request bodies are not found for B either (404 at the field), and nothing is made', async () => {
  const ctx = B.seed.workspaceId;
  const owner = B.seed.owner.session;
  const cases: { name: string; method: string; url: string; body: unknown; headers?: Record<string, string>; path: string[] }[] = [
    { name: 'install of A package', method: 'POST', url: '/v1/installs', body: { name: 'x1', package_id: A.ids.package, version_id: A.ids.packageVersion }, path: ['body', 'package_id'] },
    {
      name: 'install of B package with A version',
      method: 'POST',
      url: '/v1/installs',
      body: { name: 'x2', package_id: B.ids.package, version_id: A.ids.packageVersion },
      path: ['body', 'version_id'],
    },
    {
      name: 'PATCH to A version',
      method: 'PATCH',
      url: `/v1/installs/${B.ids.install}`,
      body: { desired_version_id: A.ids.packageVersion },
      headers: { 'if-match': '*' },
      path: ['body', 'desired_version_id'],
    },
    {
      name: 'restore of A render',
      method: 'POST',
      url: `/v1/installs/${B.ids.install}:restore`,
      body: { render_id: A.ids.render },
      headers: { 'if-match': '*', 'idempotency-key': 'iso-restore' },
      path: ['body', 'render_id'],
    },
    { name: 'machine on A config', method: 'POST', url: '/v1/machines', body: { compute_config_id: A.ids.computeConfig, server_type: 'cx22' }, path: ['body', 'compute_config_id'] },
    {
      name: 'machine in A cluster',
      method: 'POST',
      url: '/v1/machines',
      body: { compute_config_id: B.ids.computeConfig, server_type: 'cx22', cluster_id: A.ids.cluster },
      path: ['body', 'cluster_id'],
    },
    {
      name: 'install on A cluster',
      method: 'POST',
      url: '/v1/installs',
      body: { name: 'on-a-cluster', package_id: B.ids.package, version_id: B.ids.packageVersion, cluster_id: A.ids.cluster },
      path: ['body', 'cluster_id'],
    },
    {
      name: 'install moved to A cluster',
      method: 'PATCH',
      url: `/v1/installs/${B.ids.install}`,
      body: { cluster_id: A.ids.cluster },
      headers: { 'if-match': '*' },
      path: ['body', 'cluster_id'],
    },
    {
      name: 'config with A secret',
      method: 'POST',
      url: '/v1/compute/configs',
      body: { name: 'x', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', secret_id: A.ids.secret },
      path: ['body', 'secret_id'],
    },
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
  const lists = routes.filter((r) => r.method === 'GET' && r.params.length === 0 && !(Array.isArray(r.op.security) && r.op.security.length === 0) && !isStream(r));
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

test('token scopes, from the document: every operation naming a scope refuses a token of A without it (403 7025) and admits one with only it', async () => {
  const scoped = routes.filter((r) => typeof r.op['x-required-scope'] === 'string');
  assert.ok(scoped.length >= 40, `${scoped.length} operations name a scope`);
  const tokens = new Map<string, string>();
  const tokenWith = async (scopes: string[]) => {
    const key = scopes.join(' ');
    if (!tokens.has(key)) {
      const res = await call(A.seed.owner.session, A.seed.workspaceId, 'POST', '/v1/api_tokens', { name: `scoped ${tokens.size}`, scopes });
      assert.equal(res.statusCode, 201, res.body);
      tokens.set(key, res.json().token);
    }
    return tokens.get(key)!;
  };
  const problems: string[] = [];
  for (const route of scoped) {
    const scope = route.op['x-required-scope']!;
    assert.ok((TOKEN_SCOPES as readonly string[]).includes(scope), `${route.key}: ${scope}`);
    // Ids that name nothing: a request the scope admits ends in 404, one it refuses never gets that far.
    const url = urlOf(route, (kind) => `${A.ids[kind]!.slice(0, A.ids[kind]!.indexOf('_') + 1)}00000000000000000000000000`);
    const body = bodyFor(route);
    const implying = scope.endsWith(':read') ? `${scope.slice(0, -5)}:write` : scope;
    const without = await call(await tokenWith(TOKEN_SCOPES.filter((x) => x !== scope && x !== implying)), undefined, route.method, url, body, headersFor(route));
    const err = without.statusCode === 403 ? without.json().errors[0] : null;
    if (err?.code !== 7025 || err.metadata?.required_scope !== scope) problems.push(`${route.key} without ${scope}: ${without.statusCode} ${without.body.slice(0, 200)}`);
    const withIt = await call(await tokenWith([scope]), undefined, route.method, url, body, headersFor(route));
    if (withIt.statusCode === 403) problems.push(`${route.key} with ${scope}: ${withIt.statusCode} ${withIt.body.slice(0, 200)}`);
  }
  assert.deepEqual(problems, []);
});

test('issue 48.11, from the document: a token of A with no scope (`scopes: []`) is refused every operation that names a scope, gets what a null declaration says, and nothing else but 403 7024', async (t: TestContext) => {
  const made = await call(A.seed.owner.session, A.seed.workspaceId, 'POST', '/v1/api_tokens', { name: 'no scope at all', scopes: [] });
  assert.equal(made.statusCode, 201, made.body);
  const scopeless = made.json().token as string;
  const exactly = new Map<string, string>();
  const tokenWithOnly = async (scope: string) => {
    if (!exactly.has(scope)) {
      const res = await call(A.seed.owner.session, A.seed.workspaceId, 'POST', '/v1/api_tokens', { name: `only ${scope}`, scopes: [scope] });
      assert.equal(res.statusCode, 201, res.body);
      exactly.set(scope, res.json().token);
    }
    return exactly.get(scope)!;
  };
  // Accepting needs a live invitation to get as far as asking who the caller is.
  const invitation = await call(A.seed.owner.session, A.seed.workspaceId, 'POST', `/v1/workspaces/${A.seed.workspaceId}/invitations`, {
    email: `scopeless-${randomBytes(4).toString('hex')}@example.com`,
    role: 'member',
  });
  assert.equal(invitation.statusCode, 201, invitation.body);
  const invitationSecret = (invitation.json().url as string).split('#')[1]!;
  const nowhere = (kind: string) => `${A.ids[kind]!.slice(0, A.ids[kind]!.indexOf('_') + 1)}00000000000000000000000000`;
  const codeOf = (res: Awaited<ReturnType<Call>>): number | undefined => {
    try {
      return res.json()?.errors?.[0]?.code;
    } catch {
      return undefined;
    }
  };

  const problems: string[] = [];
  const tally = { scoped: 0, refused: 0, open: 0, userOnly: 0 };
  for (const route of routes.filter((r) => !r.public)) {
    const declared = route.op['x-required-scope'];
    const body = route.key === 'POST /v1/invitations:accept' ? { token: invitationSecret } : bodyFor(route);
    if (typeof declared === 'string') {
      tally.scoped++;
      // Ids that name nothing: the scope is judged before existence, and no write can land.
      const url = urlOf(route, nowhere);
      const res = await call(scopeless, undefined, route.method, url, body, headersFor(route));
      const err = res.statusCode === 403 ? res.json().errors[0] : null;
      if (err?.code !== 7025 || err.metadata?.required_scope !== declared) problems.push(`${route.key} (x-required-scope ${declared}), no scope: ${res.statusCode} ${res.body.slice(0, 200)}`);
      const withIt = await call(await tokenWithOnly(declared), undefined, route.method, url, body, headersFor(route));
      if ((withIt.statusCode === 403 && codeOf(withIt) === 7025) || withIt.statusCode >= 500) problems.push(`${route.key} with exactly ${declared}: ${withIt.statusCode} ${withIt.body.slice(0, 200)}`);
      continue;
    }
    const url = urlOf(route, (kind) => A.ids[kind]!);
    const res = await call(scopeless, undefined, route.method, url, body, headersFor(route));
    const got = `${res.statusCode}${codeOf(res) ? ` ${codeOf(res)}` : ''}`;
    if (res.statusCode >= 500) problems.push(`${route.key}: ${got} ${res.body.slice(0, 200)}`);
    if (declared === null) {
      // A null declaration is written in the document: which way, and why.
      const why = route.op['x-token-scope-why'];
      if (!why || !['refused', 'open'].includes(why.tokens) || !(why.why.trim().length > 10) || !route.op.description?.includes(why.why)) {
        problems.push(`${route.key}: x-required-scope null without its x-token-scope-why in the document: ${JSON.stringify(why)}`);
        continue;
      }
      if (why.tokens === 'open') {
        tally.open++;
        if (res.statusCode < 200 || res.statusCode > 299) problems.push(`${route.key} is declared open to any token, yet a token of no scope got ${got} ${res.body.slice(0, 200)}`);
      } else {
        tally.refused++;
        if (res.statusCode !== 403 || ![7023, 7024].includes(codeOf(res)!)) problems.push(`${route.key} is declared closed to tokens, yet a token of no scope got ${got} ${res.body.slice(0, 200)}`);
      }
      continue;
    }
    // No declaration: only a route for users (no workspace) may omit it, and it refuses every token.
    tally.userOnly++;
    if (res.statusCode !== 403 || codeOf(res) !== 7024) problems.push(`${route.key} declares no token scope, yet a token of no scope got ${got} ${res.body.slice(0, 200)}`);
  }
  t.diagnostic(
    `a token of no scope: ${tally.scoped} operations refused 7025 naming their scope, ${tally.refused} declared closed to tokens, ${tally.open} declared open to any token, ${tally.userOnly} for users only (7024)`,
  );
  assert.deepEqual(problems, []);
  assert.ok(tally.scoped >= 70 && tally.refused >= 8 && tally.open >= 5 && tally.userOnly >= 8, JSON.stringify(tally));
  // The hole of issue 48.11 by name: people's emails and names need members:read.
  for (const path of ['/v1/workspaces/{id}/members', '/v1/workspaces/{id}/invitations']) assert.equal(routes.find((r) => r.key === `GET ${path}`)?.op['x-required-scope'], 'members:read', path);
});

test("the log of everything above holds none of A's or B's credentials or secret payloads", () => {
  assert.ok(lines.length > 500, `${lines.length} log lines`);
  const needles = [...A.credentials, ...B.credentials];
  const hits = lines.filter((l) => needles.some((n) => l.includes(n)));
  assert.deepEqual(hits, []);
});

test("the events recorded by everything above hold none of A's or B's credentials or secret payloads", async () => {
  const rows = await h.database.db.selectFrom('events').selectAll().execute();
  assert.ok(rows.length > 50, `${rows.length} events`);
  const needles = [...A.credentials, ...B.credentials];
  const hits = rows.map((r) => JSON.stringify(r)).filter((text) => needles.some((n) => text.includes(n)));
  assert.deepEqual(hits, []);
  // The scan can fail: A's secret payload and a credential are in its needles.
  assert.ok(A.credentials.includes(A.secretPayloads[0]!) && A.credentials.includes(A.token.token));
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
