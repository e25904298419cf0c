import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { as, type Seed, type TestApp } from '../helpers/harness.js';
import { notify } from '../../src/notifications/service.js';
import { snippetWidget } from '../dashboards/fixtures.js';
import { dereferenced } from '../helpers/openapi-deref.js';

/**
 * One resource of every kind, made through the API in one workspace: what the tenant-isolation
 * suite tries to reach from another workspace, and what the log scans look for.
 * Every name made here carries `marker`, so any of it showing up elsewhere is easy to find.
 */
export interface TenantFixture {
  seed: Seed;
  marker: string;
  /** Fixture kind (see KIND_OF_COLLECTION) to the canonical id of the resource of that kind. */
  ids: Record<string, string>;
  /** A workspace API token made through the API, with its plaintext. */
  token: { id: string; token: string };
  /** Payloads of the secret's versions, plaintext and base64. */
  secretPayloads: string[];
  /** Every id, name, etag, credential and value of the workspace: none may reach another workspace. */
  sensitive: string[];
  /** Credentials and secret payloads only: none may ever reach a log line. */
  credentials: string[];
}

type Response = Awaited<ReturnType<TestApp['app']['inject']>>;
export type Call = (credential: string, workspaceId: string | undefined, method: string, url: string, body?: unknown, headers?: Record<string, string>) => Promise<Response>;

export function caller(h: TestApp): Call {
  return (credential, workspaceId, method, url, body, headers = {}) =>
    h.app.inject({
      method: method as 'GET',
      url,
      headers: as(credential, workspaceId, headers),
      ...(body === undefined ? {} : { payload: body as object }),
    });
}

/** Makes the workspace's resources (the job runner is driven by hand, to finish renders and machines). */
export async function buildTenant(h: TestApp, name: string): Promise<TenantFixture> {
  const marker = `zq${randomBytes(5).toString('hex')}`;
  const s = await h.seed(`${name} ${marker}`);
  const call = caller(h);
  const ok = async (method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
    const res = await call(s.owner.session, s.workspaceId, method, url, body, headers);
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${name}: ${method} ${url} -> ${res.statusCode} ${res.body}`);
    return res.statusCode === 204 ? null : res.json();
  };
  const ids: Record<string, string> = { workspace: s.workspaceId };
  const etags: string[] = [];

  const ws = await ok('GET', `/v1/workspaces/${s.workspaceId}`);
  etags.push((await ok('PATCH', `/v1/workspaces/${s.workspaceId}`, { name: `${marker} workspace` }, { 'if-match': ws.etag })).etag);

  const token = await ok('POST', '/v1/api_tokens', { name: `${marker} token` });
  ids.token = token.id;

  // A spare session of the owner, for the routes that name a session (the owner's own stays in use).
  const spare = (await h.admin.createSession(s.owner.userId)).session_token;
  const spareListed = await call(spare, undefined, 'GET', '/v1/sessions');
  ids.session = (spareListed.json().data as Array<{ id: string; current: boolean }>).find((x) => x.current)!.id;

  const secret = await ok('POST', '/v1/secrets', { name: `${marker}-secret` });
  ids.secret = secret.id;
  const plain = [`${marker}-payload-one`, `${marker}-payload-two`];
  const b64 = plain.map((p) => Buffer.from(p).toString('base64'));
  const v1 = await ok('POST', `/v1/secrets/${secret.id}/versions`, { data: b64[0], comment: `${marker} comment` });
  await ok('POST', `/v1/secrets/${secret.id}/versions`, { data: b64[1] });
  ids.secretVersion = v1.id;

  const configId = (await ok('POST', '/v1/compute/configs', { name: `${marker} config`, provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', machine_type_filter: 'cx*' })).id;
  ids.computeConfig = configId;
  const machine = await ok('POST', '/v1/machines', { compute_config_id: configId, server_type: 'cx22', hostname: `${marker}-host` });
  ids.machine = machine.id;
  await h.app.jobs.runDue();
  const running = await ok('GET', `/v1/machines/${machine.id}`);
  assert.equal(running.status, 'running', JSON.stringify(running));
  ids.defaultCluster = running.cluster_id;
  // A cluster of its own (issue 52), holding the install below: the clusters routes' path id.
  const cluster = await ok('POST', '/v1/clusters', { name: `${marker}-cluster`, region: 'fsn1', description: `${marker} cluster` });
  ids.cluster = cluster.id;
  await ok('POST', `/v1/machines/${machine.id}:suspend`, {}, { 'if-match': running.etag });
  await h.app.jobs.runDue();
  const susp = (await ok('GET', '/v1/compute/suspensions')) as { id: string }[];
  assert.equal(susp.length, 1, JSON.stringify(susp));
  ids.suspension = susp[0]!.id;

  const pkg = await ok('POST', '/v1/packages', { name: `${marker}-package` });
  ids.package = pkg.id;
  const version = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': `Hello {{who}} ${marker}\n` } });
  ids.packageVersion = version.id;
  const install = await ok('POST', '/v1/installs', { name: `${marker}-install`, package_id: pkg.id, version_id: version.id, values: { who: `${marker}-value` }, cluster_id: cluster.id });
  ids.install = install.id;
  await h.app.jobs.runDue();
  const renders = (await ok('GET', `/v1/installs/${install.id}/renders`)).data as { id: string; state: string; operation_id: string; commit_sha: string; render_hash: string }[];
  assert.equal(renders[0]?.state, 'succeeded', JSON.stringify(renders));
  ids.render = renders[0].id;
  ids.operation = renders[0].operation_id;
  // Under review, a second render opens a repository change request (docs/spec-gaps.md, "Repository change requests").
  const reviewed = await ok(
    'PATCH',
    `/v1/installs/${install.id}`,
    { delivery: 'change_request', values: { who: `${marker}-reviewed` } },
    { 'if-match': (await ok('GET', `/v1/installs/${install.id}`)).etag },
  );
  await h.app.jobs.runDue();
  ids.changeRequest = (await ok('GET', `/v1/renders/${reviewed.last_render.id}`)).repository_change_request_id;
  assert.match(ids.changeRequest!, /^rcr_/);

  const snippet = await ok('POST', '/v1/snippets', { name: `${marker} snippet`, source: `select '${marker}'` });
  ids.snippet = snippet.id;
  const dashboard = await ok('POST', '/v1/dashboards', {
    name: `${marker} dashboard`,
    description: `${marker} description`,
    purpose: 'workspace_overview',
    filter_definitions: [{ kind: 'time', key: 'time', label: `${marker} time` }],
    default_filter_values: { note: `${marker} default` },
    widgets: [snippetWidget(snippet, { title: `${marker} widget` })],
  });
  ids.dashboard = dashboard.id;
  ids.dashboardRevision = dashboard.current_revision_id;
  await ok('PATCH', `/v1/dashboards/${dashboard.id}`, { name: `${marker} dashboard 2`, summary: `${marker} summary` }, { 'if-match': dashboard.etag });

  await notify(h.database.db, h.clock, {
    userIds: [s.owner.userId, s.admin.userId],
    type: 'machine_expiry',
    resource_type: 'machine',
    resource_id: machine.id,
    title: `Suspended machine ${marker}-host is deleted in 3 days`,
    body: `${marker} notice`,
    severity: 'info',
    context: { workspace_id: s.workspaceId, machine_id: machine.id },
  });
  const notices = (await ok('GET', '/v1/notifications')).data as { id: string }[];
  assert.equal(notices.length, 1);
  ids.notification = notices[0]!.id;

  // A member (by user id) and a pending invitation: the members and invitations routes' path ids.
  ids.member = s.admin.userId;
  const invitation = await ok('POST', `/v1/workspaces/${s.workspaceId}/invitations`, { email: `${marker}@example.com`, role: 'member' });
  ids.invitation = invitation.id;
  const invitationSecret = (invitation.url as string).slice((invitation.url as string).indexOf('#') + 1);

  // A webhook with one delivery (its :test), made last: no job runs after it, so nothing tries
  // to reach its (public, unreachable) address.
  const webhook = await ok('POST', '/v1/webhooks', { url: `https://93.184.216.34/${marker}`, event_types: ['snippet.*'], description: `${marker} webhook` });
  ids.webhook = webhook.id;
  ids.webhookDelivery = (await ok('POST', `/v1/webhooks/${webhook.id}:test`, {})).id;

  // Everything the owner can read of the workspace now: each etag, hash and commit is the workspace's too.
  for (const url of [
    `/v1/workspaces/${s.workspaceId}`,
    `/v1/secrets/${secret.id}`,
    `/v1/secrets/${secret.id}/versions/${v1.id}`,
    `/v1/compute/configs/${configId}`,
    `/v1/clusters/${cluster.id}`,
    `/v1/machines/${machine.id}`,
    `/v1/installs/${install.id}`,
    `/v1/installs/${install.id}/repository`,
    `/v1/renders/${ids.render}`,
    `/v1/repository_change_requests/${ids.changeRequest}`,
    `/v1/snippets/${snippet.id}`,
    `/v1/dashboards/${dashboard.id}`,
    `/v1/webhooks/${webhook.id}`,
  ]) {
    const body = await ok('GET', url);
    for (const k of ['etag', 'commit_sha', 'head_commit_sha', 'render_hash', 'tree_sha']) if (typeof body[k] === 'string') etags.push(body[k]);
  }
  const bare = (id: string) => id.slice(id.indexOf('_') + 1);
  const credentials = [s.owner.session, s.admin.session, s.member.session, s.apiToken, token.token, spare, invitationSecret, webhook.secret, ...plain, ...b64];
  const sensitive = [marker, ...Object.values(ids).flatMap((id) => [id, bare(id)]), s.owner.userId, s.admin.userId, s.member.userId, s.apiTokenId, ...etags, ...credentials];
  return { seed: s, marker, ids, token: { id: token.id, token: token.token }, secretPayloads: [...plain, ...b64], sensitive: [...new Set(sensitive)], credentials };
}

/** The strings of `sensitive` found in a response's body or headers. */
export function leaked(res: { body: string; headers: Record<string, unknown> }, sensitive: readonly string[], allowed: readonly string[] = []): string[] {
  const text = `${res.body}\n${Object.entries(res.headers)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join('\n')}`;
  return sensitive.filter((x) => !allowed.includes(x) && text.includes(x));
}

/**
 * The collection a path id follows (its literal segments before it) to the fixture kind of that
 * id: how the shared suites name an existing resource for every path id of the document.
 */
export const KIND_OF_COLLECTION: Record<string, string> = {
  workspaces: 'workspace',
  api_tokens: 'token',
  sessions: 'session',
  operations: 'operation',
  notifications: 'notification',
  secrets: 'secret',
  'secrets/versions': 'secretVersion',
  'compute/configs': 'computeConfig',
  clusters: 'cluster',
  machines: 'machine',
  'compute/suspensions': 'suspension',
  packages: 'package',
  'packages/versions': 'packageVersion',
  installs: 'install',
  renders: 'render',
  repository_change_requests: 'changeRequest',
  snippets: 'snippet',
  dashboards: 'dashboard',
  'dashboards/revisions': 'dashboardRevision',
  'workspaces/members': 'member',
  'workspaces/invitations': 'invitation',
  webhooks: 'webhook',
  'webhooks/deliveries': 'webhookDelivery',
};

/** Each `{param}` of a path with the fixture kind its collection names ('' when there is none). */
export function paramsOf(path: string): { name: string; kind: string }[] {
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

/** Every operation of the app's OpenAPI document. */
export interface DocOperation {
  parameters?: { in: string; name: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, any> }> };
  responses: Record<string, unknown>;
  security?: unknown[];
  /** The scope an API token needs (docs/spec-gaps.md, "Token scopes"); null: none, and `x-token-scope-why` says why. Absent: no token gets past its workspace rule (routes for users only). */
  'x-required-scope'?: string | null;
  'x-token-scope-why'?: { tokens: 'refused' | 'open'; why: string };
  description?: string;
}
export interface DocRoute {
  method: string;
  path: string;
  /** `METHOD path`, as the suites' tables name routes. */
  key: string;
  op: DocOperation;
  params: { name: string; kind: string }[];
  /** The statuses the document lists for the route. */
  documented: Set<number>;
  /** No credential needed (`security: []`). */
  public: boolean;
}

/**
 * The headers that keep an injected request from holding a stream open (an inject answers only
 * when the response ends): a route that answers `text/event-stream` is asked for JSON, which it
 * refuses (406 7026) after every check before its handler. test/notifications/stream.test.ts
 * streams over real HTTP.
 */
export function noStream(route: { op: DocOperation }): Record<string, string> {
  return JSON.stringify(route.op.responses['200'] ?? {}).includes('text/event-stream') ? { accept: 'application/json' } : {};
}

/**
 * Paths whose parameter names something every workspace has (a platform metric), not a
 * resource of one: the suites call them at a fixed value, as they call lists, and judge them as
 * lists (nothing of another workspace in the answer).
 */
export const FIXED_PATHS: Record<string, string> = { '/v1/platform_metrics/{key}/series': '/v1/platform_metrics/writes/series', '/v1/regions/{id}': '/v1/regions/fsn1' };

export function documentRoutes(h: TestApp): DocRoute[] {
  const paths = dereferenced(h.app.swagger() as unknown as { paths: Record<string, Record<string, DocOperation>> }).paths;
  return Object.entries(paths).flatMap(([documented, item]) => {
    const path = FIXED_PATHS[documented] ?? documented;
    return Object.entries(item)
      .filter(([m]) => ['get', 'post', 'patch', 'put', 'delete'].includes(m))
      .map(([m, op]) => ({
        method: m.toUpperCase(),
        path,
        key: `${m.toUpperCase()} ${path}`,
        op,
        params: paramsOf(path),
        documented: new Set(Object.keys(op.responses).map(Number)),
        public: Array.isArray(op.security) && op.security.length === 0,
      }));
  });
}
