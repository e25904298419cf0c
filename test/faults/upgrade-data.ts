import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait.js';

/**
 * The data set of the upgrade fixture (scripts/make-upgrade-fixture.ts): one or more of every
 * kind of resource the previous release had, written through its API, and what the upgrade test
 * (test/faults/upgrade.test.ts) reads back through the current one.
 */
export interface UpgradeManifest {
  /** The commit whose server wrote the data (test/faults/previous-release.ts). */
  commit: string;
  engine: 'sqlite' | 'postgres';
  madeAt: string;
  workspaceId: string;
  ownerUserId: string;
  adminUserId: string;
  /** Workspace API tokens with their plaintext: `live` ones must still authenticate, `revoked` ones never. */
  tokens: { live: { id: string; token: string }[]; revoked: { id: string; token: string }[] };
  /** Secret versions whose payload `:access` must return, base64. */
  payloads: { secretId: string; versionId: string; data: string }[];
  installs: { id: string; renders: string[] }[];
  dashboards: { id: string; revisions: string[] }[];
  /** The answer of each GET at the time: the new server must answer every field the same (see VOLATILE). */
  snapshots: Record<string, unknown>;
  /** Every id of each list: all of them must still be listed. */
  lists: Record<string, string[]>;
}

/**
 * Fields that change with time or by the worker, not by the upgrade: a token's last use, a
 * machine's state as the scheduler and the provider move it (a fixture's suspension expires a
 * day after it was made, which clears its machine's suspension_id), a webhook's delivery attempts
 * against its unreachable address (a day of them disables it, with a reason), a notification's
 * read mark set by the test's own reads.
 */
export const VOLATILE = new Set([
  'last_used_at',
  'status',
  'state',
  'etag',
  'updated_at',
  'attempts',
  'next_attempt_at',
  'last_attempt_at',
  'last_status',
  'last_error',
  'failures',
  'consecutive_failures',
  'disabled_at',
  'disabled_reason',
  'ended_at',
  'notices_sent',
  'read_at',
  'response_status',
  'delivered_at',
  'error',
  'suspension_id',
]);

/**
 * Lists whose members end with time, not by the upgrade: the fixture's suspension a day after it
 * was made (it was made with a retention of one day), its invitation seven days after (docs/spec-gaps.md
 * §9). The fixture is committed once and read for months: without this, the test would fail a
 * day after the fixture was made, for what the clock did.
 */
const ENDS_WITH_TIME: readonly { list: RegExp; afterSeconds: number }[] = [
  { list: /^\/v1\/compute\/suspensions$/, afterSeconds: 24 * 3600 },
  { list: /^\/v1\/workspaces\/[^/]+\/invitations$/, afterSeconds: 7 * 24 * 3600 },
];
/** Around the end, either answer is right: the end is a job's or a read's, not to the second. */
const END_MARGIN_SECONDS = 3600;

/**
 * Whether the members of `url` that the fixture listed must still be listed, must be gone (their
 * end passed: the current release ends them as the previous one did), or may be either (near it).
 */
export function listingAt(url: string, madeAt: string, nowMs: number): 'listed' | 'ended' | 'either' {
  const end = ENDS_WITH_TIME.find((e) => e.list.test(url));
  if (!end) return 'listed';
  const age = (nowMs - Date.parse(madeAt)) / 1000;
  if (age < end.afterSeconds - END_MARGIN_SECONDS) return 'listed';
  return age > end.afterSeconds + END_MARGIN_SECONDS ? 'ended' : 'either';
}

/** Paths whose answers the worker or the clock move: only their non-volatile fields are compared. */
const MOVING = [/^\/v1\/machines/, /^\/v1\/compute\/suspensions/, /^\/v1\/webhooks/, /^\/v1\/notifications/, /^\/v1\/api_tokens/];

/** The differences between what was written (`before`) and what is read now (`now`), as paths; added fields are not differences. */
export function differences(url: string, before: unknown, now: unknown, at = ''): string[] {
  const moving = MOVING.some((r) => r.test(url));
  if (before === null || typeof before !== 'object') return before === now ? [] : [`${at || '.'}: ${JSON.stringify(before)} -> ${JSON.stringify(now)}`];
  if (now === null || typeof now !== 'object' || Array.isArray(before) !== Array.isArray(now)) return [`${at}: ${JSON.stringify(before)} -> ${JSON.stringify(now)}`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(before)) {
    if (moving && VOLATILE.has(k)) continue;
    out.push(...differences(url, v, (now as Record<string, unknown>)[k], `${at}/${k}`));
  }
  return out;
}

type Credential = string;

/**
 * fetch, JSON in and out. Not test/helpers/processes.ts's `api`: the fixture script uses this
 * module outside node:test, where that module's end-of-file log scan cannot be registered.
 */
export async function apiCall(base: string, method: string, url: string, credential: string, workspaceId: string | undefined, body?: unknown, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}`, ...extra };
  if (workspaceId) headers['service-context'] = workspaceId;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Calls of one credential in one workspace against `base`, failing on anything but 2xx. */
export function caller(base: string, credential: Credential, workspaceId: string) {
  const call = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => apiCall(base, method, url, credential, workspaceId, body, headers);
  const ok = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await call(method, url, body, headers);
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${url} -> ${res.status} ${res.text}`);
    return res.body;
  };
  const all = async (url: string): Promise<any[]> => {
    const out: any[] = [];
    let cursor: string | null = null;
    do {
      const sep = url.includes('?') ? '&' : '?';
      const page = await ok('GET', `${url}${sep}limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      out.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  };
  return { call, ok, all };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * Writes the data set through a server of the previous release (`base`) as the owner, and
 * returns what to check. The server runs with a provider stub, a scheduler scanning every
 * second with a retention of one day (so the suspension's expiry notice is sent at once), and
 * webhooks allowed to reach loopback (so a delivery is attempted, and fails, on 127.0.0.1:9).
 */
export async function writeDataSet(base: string, owner: { session: string; userId: string; adminUserId: string; workspaceId: string }): Promise<Omit<UpgradeManifest, 'commit' | 'engine' | 'madeAt'>> {
  const ws = owner.workspaceId;
  const { ok, all } = caller(base, owner.session, ws);

  const workspace = await ok('GET', `/v1/workspaces/${ws}`);
  await ok('PATCH', `/v1/workspaces/${ws}`, { name: 'Upgrade fixture' }, { 'if-match': workspace.etag });

  const live = [await ok('POST', '/v1/api_tokens', { name: 'upgrade full' }), await ok('POST', '/v1/api_tokens', { name: 'upgrade read', scopes: ['secrets:read', 'installs:read'] })];
  const gone = await ok('POST', '/v1/api_tokens', { name: 'upgrade revoked' });
  await ok('DELETE', `/v1/api_tokens/${gone.id}`);

  const payloads: UpgradeManifest['payloads'] = [];
  const secret = await ok('POST', '/v1/secrets', { name: 'database-password' });
  const versions: any[] = [];
  for (const text of ['first password', 'second password', 'third password']) {
    const v = await ok('POST', `/v1/secrets/${secret.id}/versions`, { data: b64(text), comment: `set to ${text}` });
    versions.push(v);
    payloads.push({ secretId: secret.id, versionId: v.id, data: b64(text) });
  }
  // One of each state: enabled (the two kept), disabled, destroyed.
  const disabling = await ok('GET', `/v1/secrets/${secret.id}/versions/${versions[1].id}`);
  await ok('POST', `/v1/secrets/${secret.id}/versions/${versions[1].id}:disable`, {}, { 'if-match': disabling.etag });
  const first = await ok('GET', `/v1/secrets/${secret.id}/versions/${versions[0].id}`);
  await ok('POST', `/v1/secrets/${secret.id}/versions/${versions[0].id}:destroy`, {}, { 'if-match': first.etag });
  const kept = payloads.filter((p) => p.versionId === versions[2].id);
  const other = await ok('POST', '/v1/secrets', { name: 'api-key' });
  const otherVersion = await ok('POST', `/v1/secrets/${other.id}/versions`, { data: b64('k-123') });
  kept.push({ secretId: other.id, versionId: otherVersion.id, data: b64('k-123') });

  const config = await ok('POST', '/v1/compute/configs', { name: 'upgrade config', provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04', machine_type_filter: 'cx*' });
  const machines: any[] = [];
  for (const hostname of ['upgrade-kept', 'upgrade-suspended']) {
    const m = await ok('POST', '/v1/machines', { compute_config_id: config.id, server_type: 'cx22', hostname });
    machines.push(
      await waitFor(`machine ${hostname} running`, async () => {
        const now = await ok('GET', `/v1/machines/${m.id}`);
        return now.status === 'running' ? now : null;
      }),
    );
  }
  await ok('POST', `/v1/machines/${machines[1].id}:suspend`, {}, { 'if-match': machines[1].etag });
  await waitFor('the suspension', async () => (await ok('GET', '/v1/compute/suspensions')).length === 1);

  const pkg = await ok('POST', '/v1/packages', { name: 'upgrade-site' });
  const v1 = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'index.html': '<h1>{{title}}</h1>\n', 'config/app.yaml': 'replicas: {{replicas}}\n' } });
  const v2 = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.1.0', files: { 'index.html': '<h1>{{title}}</h1><p>v1.1</p>\n', 'config/app.yaml': 'replicas: {{replicas}}\n' } });
  const renderDone = async (installId: string, count: number) =>
    waitFor(`${count} finished renders of ${installId}`, async () => {
      const rs = await all(`/v1/installs/${installId}/renders`);
      return rs.length === count && rs.every((r) => r.state === 'succeeded') ? rs : null;
    });
  const install = await ok('POST', '/v1/installs', { name: 'upgrade-site-prod', package_id: pkg.id, version_id: v1.id, values: { title: 'Prod', replicas: '2' } });
  const firstRenders = await renderDone(install.id, 1);
  const afterFirst = await ok('GET', `/v1/installs/${install.id}`);
  const patched = await ok('PATCH', `/v1/installs/${install.id}`, { desired_version_id: v2.id, values: { title: 'Prod', replicas: '3' } }, { 'if-match': afterFirst.etag });
  await renderDone(install.id, 2);
  const afterSecond = await ok('GET', `/v1/installs/${install.id}`);
  await ok('POST', `/v1/installs/${install.id}:restore`, { render_id: firstRenders[0].id }, { 'if-match': afterSecond.etag, 'idempotency-key': 'upgrade-restore' });
  const renders = await renderDone(install.id, 3);
  assert.ok(patched);
  const second = await ok('POST', '/v1/installs', { name: 'upgrade-site-staging', package_id: pkg.id, version_id: v2.id, values: { title: 'Staging', replicas: '1' } });
  const secondRenders = await renderDone(second.id, 1);

  const snippet = await ok('POST', '/v1/snippets', { name: 'errors by hour', source: "select date_trunc('hour', at) as hour, count(*) from errors group by 1" });
  const archived = await ok('POST', '/v1/snippets', { name: 'old query', source: 'select 1' });
  await ok('POST', `/v1/snippets/${archived.id}:archive`, {}, { 'if-match': archived.etag });
  const dashboard = await ok('POST', '/v1/dashboards', {
    name: 'Operations',
    description: 'What the on-call person looks at',
    purpose: 'workspace_overview',
    filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }],
    default_filter_values: { note: 'last day' },
    widgets: [
      {
        widget_type: 'snippet',
        position: 1,
        title: 'Errors',
        col_span: 4,
        height: 'tall',
        drill_down: 'https://example.test/errors',
        visualization_options: { stacked: true },
        freshness_policy: { mode: 'max_age', max_age_seconds: 300 },
        snippet_id: snippet.id,
        snippet_etag: snippet.etag,
        input_bindings: { since: { mode: 'inherit', filter_key: 'time' } },
        visualization: 'table',
        refresh_policy: { mode: 'interval', interval_seconds: 60 },
        display_type: 'table',
      },
    ],
  });
  const renamed = await ok('PATCH', `/v1/dashboards/${dashboard.id}`, { name: 'Operations (renamed)', summary: 'renamed' }, { 'if-match': dashboard.etag });
  await ok('POST', `/v1/dashboards/${dashboard.id}/revisions/${dashboard.current_revision_id}:restore`, {}, { 'if-match': renamed.etag });
  const revisions = (await all(`/v1/dashboards/${dashboard.id}/revisions`)).map((r) => r.id);
  assert.equal(revisions.length, 3);

  // The expiry notice of the suspension (retention one day: within the warning at once), to the owner and the admin.
  const notices = await waitFor('the expiry notice', async () => {
    const list = await all('/v1/notifications');
    return list.length > 0 ? list : null;
  });
  await ok('PATCH', `/v1/notifications/${notices[0].id}/read`);

  const invitation = await ok('POST', `/v1/workspaces/${ws}/invitations`, { email: 'new.person@example.com', role: 'member' });
  const hook = await ok('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/upgrade-hook', event_types: ['snippet.*', 'secret.*'], description: 'upgrade fixture' });
  await ok('POST', `/v1/webhooks/${hook.id}:test`, {});

  const snapshots: Record<string, unknown> = {};
  const urls = [
    `/v1/workspaces/${ws}`,
    `/v1/secrets/${secret.id}`,
    ...versions.map((v) => `/v1/secrets/${secret.id}/versions/${v.id}`),
    `/v1/secrets/${other.id}`,
    `/v1/compute/configs/${config.id}`,
    ...machines.map((m) => `/v1/machines/${m.id}`),
    `/v1/packages/${pkg.id}`,
    `/v1/packages/${pkg.id}/versions/${v1.id}`,
    `/v1/packages/${pkg.id}/versions/${v2.id}`,
    `/v1/installs/${install.id}`,
    `/v1/installs/${install.id}/repository`,
    `/v1/installs/${second.id}`,
    ...[...renders, ...secondRenders].map((r) => `/v1/renders/${r.id}`),
    `/v1/snippets/${snippet.id}`,
    `/v1/snippets/${archived.id}`,
    `/v1/dashboards/${dashboard.id}`,
    ...revisions.map((r) => `/v1/dashboards/${dashboard.id}/revisions/${r}`),
    `/v1/webhooks/${hook.id}`,
  ];
  for (const url of urls) snapshots[url] = await ok('GET', url);
  const lists: Record<string, string[]> = {};
  for (const url of [
    '/v1/api_tokens',
    '/v1/secrets',
    `/v1/secrets/${secret.id}/versions`,
    '/v1/compute/configs',
    '/v1/machines',
    '/v1/packages',
    `/v1/packages/${pkg.id}/versions`,
    '/v1/installs',
    `/v1/installs/${install.id}/renders`,
    '/v1/snippets',
    '/v1/dashboards',
    `/v1/dashboards/${dashboard.id}/revisions`,
    '/v1/notifications',
    `/v1/workspaces/${ws}/invitations`,
    `/v1/workspaces/${ws}/members`,
    '/v1/webhooks',
    `/v1/webhooks/${hook.id}/deliveries`,
    '/v1/audit_events',
  ]) {
    lists[url] = (await all(url)).map((x) => x.id ?? x.user_id);
  }
  const suspensions = await ok('GET', '/v1/compute/suspensions');
  lists['/v1/compute/suspensions'] = suspensions.map((s: { id: string }) => s.id);
  assert.ok(invitation.id);
  return {
    workspaceId: ws,
    ownerUserId: owner.userId,
    adminUserId: owner.adminUserId,
    tokens: { live: live.map((t) => ({ id: t.id, token: t.token })), revoked: [{ id: gone.id, token: gone.token }] },
    payloads: kept,
    installs: [
      { id: install.id, renders: renders.map((r) => r.id) },
      { id: second.id, renders: secondRenders.map((r) => r.id) },
    ],
    dashboards: [{ id: dashboard.id, revisions }],
    snapshots,
    lists,
  };
}
