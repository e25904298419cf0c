import { test, describe } from 'node:test';
import { RETRY_DELAYS_SECONDS } from '../../src/webhooks/delivery-job.js';
import assert from 'node:assert/strict';
import { createTestApp, as, userWithPassword, type TestApp } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { snippetWidget } from '../dashboards/fixtures.js';
import { decide, poll, startLogin } from '../oauth/device-helpers.js';
import { notify } from '../../src/notifications/service.js';
import { issueSetupCode } from '../../src/accounts/setup-code.js';
import type { EventsTable } from '../../src/db/tables.js';
import type { KyselyPlugin } from 'kysely';
import { randomUUID } from 'node:crypto';
import { startProvider } from '../helpers/oidc-provider.js';

/**
 * docs/spec-gaps.md, "Events and the audit log", derived from the OpenAPI document: every write operation that names an event
 * (`x-event-type`, from the `config.event` its route declares) records exactly that one event
 * when it succeeds, and none when it fails (before or inside its transaction); the writes that
 * name none (`event: null`) record nothing, and are exactly the ones listed here.
 */
let doc: { paths: Record<string, Record<string, { 'x-event-type'?: string }>> };
const PASSWORD = 'a long enough password';
const WRITES = new Set(['post', 'put', 'patch', 'delete']);
/** Writes that only read or belong to a client not signed in: they record nothing. */
const RECORD_NOTHING = ['POST /v1/packages/{id}/versions/{version_id}:preview', 'POST /v1/installs/{id}/repository.git/git-upload-pack', 'POST /v1/oauth/device_authorization'];

/**
 * The statements that mark an Idempotency-Key claim committed (an UPDATE of idempotency_keys
 * whose SET gives `state` the value `committed`), as the app's database handle runs them,
 * transactions included: how a write shows it took its step of `writeTransaction`.
 */
const committedMarks: string[] = [];
const markRecorder: KyselyPlugin = {
  transformQuery(args) {
    const node = args.node as { kind: string; table?: unknown; updates?: unknown };
    if (node.kind === 'UpdateQueryNode' && JSON.stringify(node.table).includes('"idempotency_keys"') && JSON.stringify(node.updates).includes('"committed"')) {
      committedMarks.push(JSON.stringify(node.updates));
    }
    return args.node;
  },
  transformResult: async (args) => args.result,
};

const h = useTestApp({
  config: { webhooks: { allowHttp: true, allowPrivate: true, retryDelaysSeconds: RETRY_DELAYS_SECONDS } },
  plugins: [markRecorder],
  setup: async () => {
    doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  },
});
const s = h.seeded;

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, path, method: m.toUpperCase(), event: op['x-event-type'], write: WRITES.has(m) })),
  );
/** The writes, and the reads that record an event (a secret's `:access`). */
const routes = () => operations().filter((r) => r.write || r.event !== undefined);

/** The document's operation a request is: its path template matched segment by segment. */
function operationOf(method: string, url: string): { key: string; event: string | undefined } {
  const path = url.split('?')[0]!;
  // Literal paths first: /v1/sessions/current is not /v1/sessions/{id}.
  for (const r of operations().sort((a, b) => a.path.split('{').length - b.path.split('{').length)) {
    if (r.method !== method) continue;
    const re = new RegExp(`^${r.path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/:]+')}$`);
    if (re.test(path)) return { key: r.key, event: r.event };
  }
  throw new Error(`no operation for ${method} ${path}`);
}

const allEvents = async (): Promise<EventsTable[]> => h.database.db.selectFrom('events').selectAll().orderBy('id').execute();

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
const succeeded = new Set<string>();
const failedChecked = new Set<string>();

/**
 * Sends a request; on a 2xx, exactly the operation's event must have been recorded (its type,
 * actor, request id, address, user agent), and nothing else; on a failure, nothing at all.
 */
async function send(
  method: string,
  url: string,
  opts: { credential?: string; workspace?: string | null; body?: unknown; headers?: Record<string, string>; form?: boolean; changesNothing?: boolean } = {},
): Promise<Res> {
  const op = operationOf(method, url);
  const before = (await allEvents()).length;
  const marksBefore = committedMarks.length;
  // Every write carries an Idempotency-Key (its own, unless the call gives one): a write that
  // claims it must mark the claim committed in its transaction (src/db/write-transaction.ts).
  const key = WRITES.has(method.toLowerCase()) ? (opts.headers?.['idempotency-key'] ?? `every-write-${randomUUID()}`) : undefined;
  const headers = {
    'user-agent': 'every-write-test/1.0',
    ...(opts.credential ? as(opts.credential, opts.workspace === null ? undefined : (opts.workspace ?? s.workspaceId)) : {}),
    ...(key ? { 'idempotency-key': key } : {}),
    ...opts.headers,
  };
  const res = await h.app.inject({
    method: method as 'POST',
    url,
    headers: opts.form ? { ...headers, 'content-type': 'application/x-www-form-urlencoded' } : headers,
    remoteAddress: '203.0.113.9',
    ...(opts.body === undefined ? {} : { payload: opts.form ? new URLSearchParams(opts.body as Record<string, string>).toString() : (opts.body as object) }),
  });
  const added = (await allEvents()).slice(before);
  const claimed = key !== undefined && (await h.database.db.selectFrom('idempotency_keys').select('key').where('key', '=', key).executeTakeFirst()) !== undefined;
  if (res.statusCode < 300 && claimed && op.event && !opts.changesNothing && res.headers['idempotent-replayed'] === undefined) {
    assert.ok(committedMarks.length > marksBefore, `${op.key} wrote with a claimed Idempotency-Key, but its transaction never marked the claim committed (writeTransaction)`);
  }
  if (res.statusCode < 300) {
    if (!opts.changesNothing) succeeded.add(op.key);
    if (!op.event || opts.changesNothing) {
      assert.deepEqual(added, [], `${op.key} names no event or changed nothing, but recorded ${added.map((e) => e.type).join(', ')}`);
      return res;
    }
    assert.deepEqual(
      added.map((e) => e.type),
      [op.event],
      `${op.key} (${res.statusCode}) must record exactly ${op.event}`,
    );
    const e = added[0]!;
    assert.equal(e.request_id, res.headers['x-request-id'], `${op.key}: the request id`);
    assert.equal(e.ip, '203.0.113.9');
    assert.equal(e.user_agent, 'every-write-test/1.0');
    assert.equal(e.resource_type, op.event.slice(0, op.event.indexOf('.')));
    assert.ok(e.resource_id.length > 0);
    assert.doesNotThrow(() => JSON.parse(e.data));
  } else {
    failedChecked.add(op.key);
    assert.deepEqual(
      added.filter((e) => e.type !== 'session.failed').map((e) => e.type),
      [],
      `${op.key} failed (${res.statusCode}) yet recorded an event`,
    );
  }
  return res;
}

const ok = async (method: string, url: string, opts: Parameters<typeof send>[2] = {}) => {
  const res = await send(method, url, { credential: s.owner.session, ...opts });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
};
const fails = async (status: number, method: string, url: string, opts: Parameters<typeof send>[2] = {}) => {
  const res = await send(method, url, { credential: s.owner.session, ...opts });
  assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
};
const STALE = { 'if-match': '"stale"' };

describe('every write operation', () => {
  test('records its event once on success and nothing on failure, across every area', async () => {
    // Workspaces and members.
    const ws = await ok('GET', `/v1/workspaces/${s.workspaceId}`);
    await fails(409, 'PATCH', `/v1/workspaces/${s.workspaceId}`, { body: { name: 'x' }, headers: STALE });
    await ok('PATCH', `/v1/workspaces/${s.workspaceId}`, { body: { name: 'Renamed' }, headers: { 'if-match': ws.etag } });
    const made = await ok('POST', '/v1/workspaces', { body: { name: 'Second' }, workspace: null });
    await fails(422, 'POST', '/v1/workspaces', { body: { name: '' }, workspace: null });
    await ok('PATCH', `/v1/workspaces/${s.workspaceId}/members/${s.member.userId}`, { body: { role: 'admin' } });
    await fails(404, 'PATCH', `/v1/workspaces/${s.workspaceId}/members/usr_nope`, { body: { role: 'admin' } });
    await fails(409, 'DELETE', `/v1/workspaces/${made.id}/members/${s.owner.userId}`, { workspace: made.id });
    await ok('DELETE', `/v1/workspaces/${s.workspaceId}/members/${s.member.userId}`);

    // Invitations: made, revoked, accepted by a new user.
    const inv = await ok('POST', `/v1/workspaces/${s.workspaceId}/invitations`, { body: { email: 'new@example.com', role: 'member' } });
    await ok('DELETE', `/v1/workspaces/${s.workspaceId}/invitations/${inv.id}`);
    await fails(404, 'DELETE', `/v1/workspaces/${s.workspaceId}/invitations/${inv.id}`);
    const inv2 = await ok('POST', `/v1/workspaces/${s.workspaceId}/invitations`, { body: { email: 'joiner@example.com', role: 'member' } });
    const secretOf = (url: string) => url.slice(url.indexOf('#') + 1);
    await fails(404, 'POST', '/v1/invitations:accept', { credential: undefined, body: { token: 'inv_nope', name: 'J', password: PASSWORD } });
    await ok('POST', '/v1/invitations:accept', { credential: undefined, body: { token: secretOf(inv2.url), name: 'Joiner', password: PASSWORD } });

    // Tokens.
    const tok = await ok('POST', '/v1/api_tokens', { body: { name: 'ci', scopes: ['secrets:read'] } });
    await fails(422, 'POST', '/v1/api_tokens', { body: { name: 'ci', scopes: ['root'] } });
    await ok('DELETE', `/v1/api_tokens/${tok.id}`);
    await fails(404, 'DELETE', `/v1/api_tokens/${tok.id}`);

    // Sessions: a sign-in, a failed one, ends.
    const user = await userWithPassword(h, PASSWORD, { workspaceId: s.workspaceId, role: 'member' });
    await fails(401, 'POST', '/v1/sessions', { credential: undefined, body: { email: user.email, password: 'wrong password here' } });
    const signed = await ok('POST', '/v1/sessions', { credential: undefined, body: { email: user.email, password: PASSWORD } });
    const other = await ok('POST', '/v1/sessions', { credential: undefined, body: { email: user.email, password: PASSWORD } });
    await fails(404, 'DELETE', '/v1/sessions/ses_nope', { credential: signed.token, workspace: null });
    await ok('DELETE', `/v1/sessions/${other.id}`, { credential: signed.token, workspace: null });
    await ok('DELETE', '/v1/sessions/current', { credential: signed.token, workspace: null });

    // Device sign-in: approve and deny, then the token endpoint's session.
    const first = await startLogin(h);
    const second = await startLogin(h);
    await fails(422, 'POST', '/v1/oauth/device/approve', { workspace: null, body: { user_code: 'nope' } });
    await ok('POST', '/v1/oauth/device/approve', { workspace: null, body: { user_code: first.user_code } });
    await ok('POST', '/v1/oauth/device/deny', { workspace: null, body: { user_code: second.user_code } });
    h.clock.advanceSeconds(6);
    const grant = { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: 'wsp-cli', device_code: first.device_code };
    await ok('POST', '/v1/oauth/token', { credential: undefined, body: grant, form: true });
    await send('POST', '/v1/oauth/device_authorization', { body: { client_id: 'wsp-cli' }, form: true });
    assert.equal((await decide(h, 'approve', s.owner.session, 'BCDF-GHJK')).statusCode, 404);
    assert.equal((await poll(h, 'nope')).statusCode, 400);

    // Notifications: marking read records once; a repeat changes nothing and records nothing.
    await notify(h.database.db, h.clock, { userIds: [s.owner.userId], type: 'machine_expiry', resource_type: 'machine', resource_id: 'mch_x', title: 't', body: 'b', severity: 'info', context: {} });
    const notice = (await ok('GET', '/v1/notifications', { workspace: null })).data[0];
    await ok('PATCH', `/v1/notifications/${notice.id}/read`, { workspace: null });
    const repeat = await send('PATCH', `/v1/notifications/${notice.id}/read`, { credential: s.owner.session, workspace: null, changesNothing: true });
    assert.equal(repeat.statusCode, 204);

    // Secrets.
    const secret = await ok('POST', '/v1/secrets', { body: { name: 'db-password' } });
    await fails(409, 'POST', '/v1/secrets', { body: { name: 'db-password' } });
    const version = await ok('POST', `/v1/secrets/${secret.id}/versions`, { body: { data: Buffer.from('hunter2').toString('base64') } });
    await fails(404, 'POST', '/v1/secrets/sec_nope/versions', { body: { data: 'eA==' } });
    await ok('GET', `/v1/secrets/${secret.id}/versions/${version.id}:access`);
    const v = `/v1/secrets/${secret.id}/versions/${version.id}`;
    await fails(409, 'POST', `${v}:disable`, { body: {}, headers: STALE });
    const disabled = await ok('POST', `${v}:disable`, { body: {}, headers: { 'if-match': version.etag } });
    await fails(409, 'GET', `${v}:access`);
    const enabled = await ok('POST', `${v}:enable`, { body: {}, headers: { 'if-match': disabled.etag } });
    await ok('POST', `${v}:destroy`, { body: {}, headers: { 'if-match': enabled.etag } });
    const current = await ok('GET', `/v1/secrets/${secret.id}`);
    await fails(409, 'DELETE', `/v1/secrets/${secret.id}`, { headers: STALE });
    await ok('DELETE', `/v1/secrets/${secret.id}`, { headers: { 'if-match': current.etag } });

    // Compute: a config, a machine suspended, resumed both ways, deleted; the config deleted.
    const config = await ok('POST', '/v1/compute/configs', { body: { name: 'c', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', machine_type_filter: 'cx*' } });
    await fails(422, 'POST', '/v1/compute/configs', { body: { name: 'c', provider: 'hetzner', region: 'nowhere', image: 'ubuntu-24.04' } });
    const machine = await ok('POST', '/v1/machines', { body: { compute_config_id: config.id, server_type: 'cx22', hostname: 'host-1' } });
    await h.app.jobs.runDue();
    let m = await ok('GET', `/v1/machines/${machine.id}`);
    await fails(409, 'POST', `/v1/machines/${machine.id}:suspend`, { body: {}, headers: STALE });
    await ok('POST', `/v1/machines/${machine.id}:suspend`, { body: {}, headers: { 'if-match': m.etag } });
    await h.app.jobs.runDue();
    m = await ok('GET', `/v1/machines/${machine.id}`);
    await ok('POST', `/v1/machines/${machine.id}:resume`, { body: {}, headers: { 'if-match': m.etag } });
    await h.app.jobs.runDue();
    m = await ok('GET', `/v1/machines/${machine.id}`);
    await fails(409, 'POST', `/v1/machines/${machine.id}:resume`, { body: {} });
    await ok('POST', `/v1/machines/${machine.id}:suspend`, { body: {}, headers: { 'if-match': m.etag } });
    await h.app.jobs.runDue();
    const susp = (await ok('GET', '/v1/compute/suspensions'))[0];
    await ok('POST', `/v1/compute/suspensions/${susp.id}:resume`, { body: {} });
    await fails(409, 'POST', `/v1/compute/suspensions/${susp.id}:resume`, { body: {} });
    await h.app.jobs.runDue();
    m = await ok('GET', `/v1/machines/${machine.id}`);
    await fails(409, 'DELETE', `/v1/compute/configs/${config.id}`, { headers: { 'if-match': (await ok('GET', `/v1/compute/configs/${config.id}`)).etag } });
    await ok('DELETE', `/v1/machines/${machine.id}`, { headers: { 'if-match': m.etag } });
    await h.app.jobs.runDue();
    await ok('DELETE', `/v1/compute/configs/${config.id}`, { headers: { 'if-match': (await ok('GET', `/v1/compute/configs/${config.id}`)).etag } });

    // Clusters: created (a second of one name fails), renamed (a stale etag fails), deleted.
    const cluster = await ok('POST', '/v1/clusters', { body: { name: 'eu', region: 'nbg1' } });
    await fails(409, 'POST', '/v1/clusters', { body: { name: 'eu', region: 'fsn1' } });
    await fails(409, 'PATCH', `/v1/clusters/${cluster.id}`, { body: { name: 'eu-2' }, headers: STALE });
    const renamed = await ok('PATCH', `/v1/clusters/${cluster.id}`, { body: { name: 'eu-2' }, headers: { 'if-match': cluster.etag } });
    await fails(409, 'DELETE', `/v1/clusters/${cluster.id}`, { headers: STALE });
    await ok('DELETE', `/v1/clusters/${cluster.id}`, { headers: { 'if-match': renamed.etag } });

    // Packages and installs.
    const pkg = await ok('POST', '/v1/packages', { body: { name: 'web' } });
    await fails(409, 'POST', '/v1/packages', { body: { name: 'web' } });
    const v1 = await ok('POST', `/v1/packages/${pkg.id}/versions`, { body: { semver: '1.0.0', files: { 'a.txt': 'Hello {{who}}' } } });
    await fails(409, 'POST', `/v1/packages/${pkg.id}/versions`, { body: { semver: '1.0.0', files: { 'a.txt': 'x' } } });
    await ok('POST', `/v1/packages/${pkg.id}/versions/${v1.id}:preview`, { body: { values: { who: 'you' } } });
    const install = await ok('POST', '/v1/installs', { body: { name: 'site', package_id: pkg.id, version_id: v1.id, values: { who: 'a' } } });
    await fails(409, 'POST', '/v1/installs', { body: { name: 'site', package_id: pkg.id, version_id: v1.id } });
    await h.app.jobs.runDue();
    const firstRender = (await ok('GET', `/v1/installs/${install.id}/renders`)).data[0];
    let inst = await ok('GET', `/v1/installs/${install.id}`);
    await fails(409, 'PATCH', `/v1/installs/${install.id}`, { body: { values: { who: 'b' } }, headers: STALE });
    await ok('PATCH', `/v1/installs/${install.id}`, { body: { values: { who: 'b' } }, headers: { 'if-match': inst.etag } });
    await h.app.jobs.runDue();
    inst = await ok('GET', `/v1/installs/${install.id}`);
    const unchanged = await send('PATCH', `/v1/installs/${install.id}`, { credential: s.owner.session, body: { values: { who: 'b' } }, headers: { 'if-match': inst.etag }, changesNothing: true });
    assert.equal(unchanged.statusCode, 200, 'a PATCH that changes nothing succeeds and records nothing');
    await fails(409, 'POST', `/v1/installs/${install.id}:restore`, { body: { render_id: firstRender.id }, headers: { ...STALE, 'idempotency-key': 'restore-stale' } });
    await ok('POST', `/v1/installs/${install.id}:restore`, { body: { render_id: firstRender.id }, headers: { 'if-match': inst.etag, 'idempotency-key': 'restore-1' } });
    await h.app.jobs.runDue();
    // Repository change requests (docs/spec-gaps.md, "Repository change requests"): opened by the admin's render, so the owner may approve.
    inst = await ok('GET', `/v1/installs/${install.id}`);
    inst = await ok('PATCH', `/v1/installs/${install.id}`, { credential: s.admin.session, body: { delivery: 'change_request', values: { who: 'c' } }, headers: { 'if-match': inst.etag } });
    await h.app.jobs.runDue();
    const crId = (await ok('GET', `/v1/renders/${inst.last_render.id}`)).repository_change_request_id as string;
    const crUrl = `/v1/repository_change_requests/${crId}`;
    const crEtag = async () => (await ok('GET', crUrl)).etag as string;
    await fails(409, 'PATCH', crUrl, { body: { title: 'x' }, headers: STALE });
    await ok('PATCH', crUrl, { body: { title: 'Reviewed' }, headers: { 'if-match': await crEtag() } });
    await fails(403, 'POST', `${crUrl}:approve`, { credential: s.admin.session, headers: { 'if-match': await crEtag() } });
    await ok('POST', `${crUrl}:approve`, { headers: { 'if-match': await crEtag() } });
    await ok('POST', `${crUrl}:close`, { headers: { 'if-match': await crEtag() } });
    await fails(409, 'POST', `${crUrl}:close`, { headers: { 'if-match': await crEtag() } });
    await ok('POST', `${crUrl}:reopen`, { headers: { 'if-match': await crEtag() } });
    await fails(409, 'POST', `${crUrl}:merge`, { body: {}, headers: STALE });
    await ok('POST', `${crUrl}:merge`, { body: {}, headers: { 'if-match': await crEtag() } });
    const git = await send('POST', `/v1/installs/${install.id}/repository.git/git-upload-pack`, { credential: s.owner.session, body: {} });
    assert.ok(git.statusCode >= 400, 'an empty upload-pack request is refused (and would record nothing either way)');
    await fails(409, 'DELETE', `/v1/packages/${pkg.id}`, { headers: { 'if-match': (await ok('GET', `/v1/packages/${pkg.id}`)).etag } });
    await fails(409, 'DELETE', `/v1/installs/${install.id}`, { headers: STALE });
    await ok('DELETE', `/v1/installs/${install.id}`, { headers: { 'if-match': (await ok('GET', `/v1/installs/${install.id}`)).etag } });
    await h.app.jobs.runDue();
    await fails(409, 'DELETE', `/v1/packages/${pkg.id}`, { headers: STALE });
    await ok('DELETE', `/v1/packages/${pkg.id}`, { headers: { 'if-match': (await ok('GET', `/v1/packages/${pkg.id}`)).etag } });

    // Snippets and dashboards.
    const snippet = await ok('POST', '/v1/snippets', { body: { name: 'errors', source: 'select 1' } });
    const edited = await ok('PATCH', `/v1/snippets/${snippet.id}`, { body: { source: 'select 2' }, headers: { 'if-match': snippet.etag } });
    await fails(409, 'PATCH', `/v1/snippets/${snippet.id}`, { body: { source: 'select 3' }, headers: { 'if-match': snippet.etag } });
    const dash = await ok('POST', '/v1/dashboards', { body: { name: 'Overview', purpose: 'workspace_overview', filter_definitions: [], default_filter_values: {}, widgets: [snippetWidget(edited)] } });
    const changed = await ok('PATCH', `/v1/dashboards/${dash.id}`, { body: { name: 'Overview 2' }, headers: { 'if-match': dash.etag } });
    await fails(409, 'PATCH', `/v1/dashboards/${dash.id}`, { body: { name: 'Overview 3' }, headers: STALE });
    const reset = await ok('POST', `/v1/dashboards/${dash.id}:reset`, { body: {}, headers: { 'if-match': changed.etag } });
    const restored = await ok('POST', `/v1/dashboards/${dash.id}/revisions/${dash.current_revision_id}:restore`, { body: {}, headers: { 'if-match': reset.etag } });
    const archived = await ok('POST', `/v1/snippets/${snippet.id}:archive`, { body: {}, headers: { 'if-match': edited.etag } });
    const unarchived = await ok('POST', `/v1/snippets/${snippet.id}:unarchive`, { body: {}, headers: { 'if-match': archived.etag } });
    await fails(409, 'DELETE', `/v1/dashboards/${dash.id}`, { headers: STALE });
    await ok('DELETE', `/v1/dashboards/${dash.id}`, { headers: { 'if-match': restored.etag } });
    await fails(409, 'DELETE', `/v1/snippets/${snippet.id}`, { headers: STALE });
    await ok('DELETE', `/v1/snippets/${snippet.id}`, { headers: { 'if-match': unarchived.etag } });

    // Webhooks (the endpoint is a closed port: deliveries fail, which changes no write's events).
    const hook = await ok('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', event_types: ['secret.*'] } });
    await fails(422, 'POST', '/v1/webhooks', { body: { url: 'ftp://x', event_types: ['secret.*'] } });
    const changedHook = await ok('PATCH', `/v1/webhooks/${hook.id}`, { body: { description: 'ci' }, headers: { 'if-match': hook.etag } });
    await fails(409, 'PATCH', `/v1/webhooks/${hook.id}`, { body: { description: 'x' }, headers: STALE });
    const tested = await ok('POST', `/v1/webhooks/${hook.id}:test`, { body: {} });
    await fails(404, 'POST', '/v1/webhooks/wh_nope:test', { body: {} });
    await ok('POST', `/v1/webhooks/${hook.id}/deliveries/${tested.id}:retry`, { body: {} });
    await fails(404, 'POST', `/v1/webhooks/${hook.id}/deliveries/whd_nope:retry`, { body: {} });
    await fails(409, 'DELETE', `/v1/webhooks/${hook.id}`, { headers: STALE });
    await ok('DELETE', `/v1/webhooks/${hook.id}`, { headers: { 'if-match': changedHook.etag } });

    // The first run's setup, on an empty platform of its own.
    const fresh = await createTestApp();
    try {
      const code = await issueSetupCode(fresh.database.db);
      const res = await fresh.app.inject({ method: 'POST', url: '/v1/setup', payload: { code, email: 'first@example.com', name: 'First', password: PASSWORD, workspace_name: 'Acme' } });
      assert.equal(res.statusCode, 201, res.body);
      const types = (await fresh.database.db.selectFrom('events').select(['type', 'workspace_id']).orderBy('id').execute()).map((e) => `${e.type} ${e.workspace_id === res.json().workspace_id}`);
      assert.deepEqual(types, ['workspace.set_up true']);
      succeeded.add('POST /v1/setup');
    } finally {
      await fresh.close();
    }

    // Single sign-on's callback, a read that records the session it makes, on a platform of its own
    // with an OpenID provider.
    const publicUrl = 'http://localhost:8080';
    const idp = await startProvider(`${publicUrl}/v1/auth/oidc/callback`);
    const sso = await createTestApp({ config: { publicUrl, oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, autoCreate: true } } });
    try {
      idp.accounts['every-write'] = { email: 'sso@idp.example', email_verified: true, name: 'Single' };
      const callback = operationOf('GET', '/v1/auth/oidc/callback');
      const ssoEvents = () => sso.database.db.selectFrom('events').selectAll().orderBy('id').execute();
      const headers = { 'user-agent': 'every-write-test/1.0' };
      const refused = await sso.app.inject({ method: 'GET', url: '/v1/auth/oidc/callback?state=nope&code=nope', headers, remoteAddress: '203.0.113.9' });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.deepEqual(
        (await ssoEvents()).map((e) => e.type),
        ['session.failed'],
        `${callback.key} failed yet recorded an event`,
      );
      const start = await sso.app.inject({ method: 'GET', url: '/v1/auth/oidc/start', headers });
      const cookies = [start.headers['set-cookie']].flat().map(String);
      const binding = cookies.find((c) => c.startsWith('wsp_oidc='))!.split(';')[0]!;
      const back = await idp.signIn(String(start.headers.location), 'every-write');
      const before = (await ssoEvents()).length;
      const done = await sso.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, headers: { ...headers, cookie: binding }, remoteAddress: '203.0.113.9' });
      assert.equal(done.statusCode, 302, done.body);
      const added = (await ssoEvents()).slice(before);
      assert.ok(callback.event, `${callback.key} names its event`);
      assert.deepEqual(
        added.map((e) => e.type),
        [callback.event],
        `${callback.key} must record exactly ${callback.event}`,
      );
      assert.equal(added[0]!.request_id, done.headers['x-request-id']);
      assert.equal(added[0]!.ip, '203.0.113.9');
      assert.equal(added[0]!.user_agent, 'every-write-test/1.0');
      assert.equal(added[0]!.resource_type, 'session');
      succeeded.add(callback.key);
    } finally {
      await sso.close();
      await idp.close();
    }

    // Every write of the document was shown to succeed above, and every one naming an event to fail too.
    const all = routes();
    const missing = all.filter((r) => !succeeded.has(r.key) && !['POST /v1/installs/{id}/repository.git/git-upload-pack'].includes(r.key)).map((r) => r.key);
    assert.deepEqual(missing, [], 'write operations this test never saw succeed');
    assert.deepEqual(
      all
        .filter((r) => r.event === undefined)
        .map((r) => r.key)
        .sort(),
      [...RECORD_NOTHING].sort(),
      'the writes that name no event',
    );
  });

  test('the token endpoint records the session it makes (session.created, issued_by device)', async () => {
    const events = await h.database.db.selectFrom('events').selectAll().where('type', '=', 'session.created').execute();
    assert.ok(
      events.some((e) => JSON.parse(e.data).issued_by === 'device'),
      JSON.stringify(events.map((e) => e.data)),
    );
  });
});
