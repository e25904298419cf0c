import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError, userWithPassword, type Seed } from '../helpers/harness.js';
import { useTestApp, type Body, type Schemas } from '../helpers/test-app.js';
import { ACCOUNT_EVENT_TYPES, EVENT_TYPE_NAMES } from '../../src/events/event-type-schemas.js';

/** GET /v1/audit_events (docs/spec-gaps.md, "Events and the audit log"): who may read it, its filters and pages, its retention. */
let other: Seed;
const PASSWORD = 'a long enough password';

const h = useTestApp({
  setup: async () => {
    other = await h.seed('Other');
  },
});
const s = h.seeded;

type Event = Schemas['AuditEvent'];
const audit = async (query = '', credential = s.owner.session, workspace: string | undefined = s.workspaceId) =>
  h.app.inject({ method: 'GET', url: `/v1/audit_events${query}`, headers: as(credential, workspace) });
const events = async (query = '') => {
  const res = await audit(query);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Body<'/v1/audit_events', 'get'>>();
};
const write = async (method: string, url: string, payload?: object, credential = s.owner.session, headers: Record<string, string> = {}) => {
  const res = await h.app.inject({ method: method as 'POST', url, headers: as(credential, s.workspaceId, headers), ...(payload ? { payload } : {}) });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
};

describe('reading the audit log', () => {
  test('owners and admins read it; a member is 403; a token needs audit:read (7025 without it)', async () => {
    await write('POST', '/v1/secrets', { name: 'first' });
    assert.equal((await audit('', s.admin.session)).statusCode, 200);
    const member = await audit('', s.member.session);
    assert.equal(member.statusCode, 403);
    const plain = await write('POST', '/v1/api_tokens', { name: 'no audit', scopes: ['secrets:read'] });
    const refused = await audit('', plain.token, undefined);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(firstError(refused.json()).metadata, { required_scope: 'audit:read' });
    const reader = await write('POST', '/v1/api_tokens', { name: 'auditor', scopes: ['audit:read'] });
    const byToken = await audit('', reader.token, undefined);
    assert.equal(byToken.statusCode, 200, byToken.body);
    assert.ok((byToken.json().data as Event[]).some((e) => e.type === 'secret.created'));
  });

  test('newest first, with actor, credential, resource and data; only the workspace of the call', async () => {
    const secret = await write('POST', '/v1/secrets', { name: 'ordered' });
    await write('POST', `/v1/secrets/${secret.id}/versions`, { data: Buffer.from('the payload').toString('base64') });
    const page = await events('?limit=2');
    assert.deepEqual(
      page.data.map((e) => e.type),
      ['secret_version.created', 'secret.created'],
    );
    const [version, created] = page.data;
    assert.equal(created!.resource.id, secret.id);
    assert.deepEqual(created!.actor, { kind: 'user', id: s.owner.userId });
    assert.match(created!.credential_id ?? '', /^ses_/);
    assert.equal(created!.workspace_id, s.workspaceId);
    assert.deepEqual(created!.data, { name: 'ordered' });
    assert.ok(!JSON.stringify(version).includes(Buffer.from('the payload').toString('base64')), 'no payload in an event');
    assert.ok(version!.id > created!.id);
    await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(other.owner.session, other.workspaceId), payload: { name: 'elsewhere' } });
    assert.ok(!(await events('?limit=100')).data.some((e) => e.workspace_id !== s.workspaceId));
  });

  test('filters: type exact or <resource>.*, actor_id, resource_id, since and until; they combine', async () => {
    const snippet = await write('POST', '/v1/snippets', { name: 'filtered', source: 'select 1' });
    await write('PATCH', `/v1/snippets/${snippet.id}`, { source: 'select 2' }, s.admin.session, { 'if-match': snippet.etag });
    const exact = await events('?type=snippet.created');
    assert.ok(exact.data.length > 0 && exact.data.every((e) => e.type === 'snippet.created'));
    const prefix = await events('?type=secret.*&limit=100');
    assert.ok(prefix.data.length >= 2 && prefix.data.every((e) => e.type.startsWith('secret.')), 'secret.* is the secret resource only, not secret_version');
    const byResource = await events(`?resource_id=${snippet.id}`);
    assert.ok(byResource.data.length >= 1 && byResource.data.every((e) => e.resource.id === snippet.id));
    const byActor = await events(`?actor_id=${s.admin.userId}&limit=100`);
    assert.deepEqual(
      byActor.data.map((e) => e.type),
      ['snippet.updated'],
    );
    const now = byResource.data[0]!.created_at;
    assert.equal((await events(`?resource_id=${snippet.id}&since=${now + 1}`)).data.length, 0);
    assert.equal((await events(`?resource_id=${snippet.id}&until=${now}`)).data.length, 0);
    assert.ok((await events(`?resource_id=${snippet.id}&since=${now}&until=${now + 1}`)).data.length >= 1);
  });

  test("since and until answer by each event's time, wherever the clock moved: an event's id is made at its time", async () => {
    // The time filters search ids (src/audit/store.ts): an event made an hour ahead or a day
    // behind the real time is found by its created_at all the same (made with Date.now()'s id, it was not).
    const start = h.clock.nowMs();
    const made: { id: string; at: number }[] = [];
    for (const shift of [0, 3600, -86_400]) {
      h.clock.set(start + shift * 1000);
      const sn = await write('POST', '/v1/snippets', { name: `moved-${shift < 0 ? 'back' : shift}`, source: 'select 1' });
      made.push({ id: sn.id, at: Math.floor(h.clock.nowMs() / 1000) });
    }
    h.clock.set(start);
    for (const m of made) {
      const found = (q: string) => events(`?resource_id=${m.id}&${q}`).then((r) => r.data.map((e) => e.created_at));
      assert.deepEqual(await found(`since=${m.at}&until=${m.at + 1}`), [m.at]);
      assert.deepEqual(await found(`since=${m.at + 1}`), []);
      assert.deepEqual(await found(`until=${m.at}`), []);
      assert.deepEqual(await found(`since=${m.at - 2}&until=${m.at + 2}&type=snippet.created`), [m.at]);
    }
  });

  test('an unknown type is 422 listing the known ones; a cursor of other filters is 422', async () => {
    const bad = await audit('?type=secret.exploded');
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(firstError(bad.json()).path, ['query', 'type']);
    for (const t of ['secret.created', 'secret_version.accessed', 'dashboard.*']) assert.ok(firstError(bad.json()).message.includes(t), t);
    for (let i = 0; i < 3; i++) await write('POST', '/v1/snippets', { name: `paged-${i}`, source: 'select 1' });
    const first = await events('?type=snippet.created&limit=2');
    assert.equal(first.has_more, true);
    const second = await events(`?type=snippet.created&limit=2&cursor=${first.next_cursor}`);
    assert.ok(
      second.data.every((e) => e.id < first.data[1]!.id),
      'the next page continues after the last shown',
    );
    const crossed = await audit(`?type=secret.*&limit=2&cursor=${first.next_cursor}`);
    assert.equal(crossed.statusCode, 422);
    assert.deepEqual(firstError(crossed.json()).path, ['query', 'cursor']);
  });

  test('the document lists every event type in one of the two filters (a workspace log, a person log) and on each write its event', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const filter = doc.paths['/v1/audit_events'].get.parameters.find((p: { name: string }) => p.name === 'type');
    const mine = doc.paths['/v1/me/events'].get.parameters.find((p: { name: string }) => p.name === 'type');
    for (const t of EVENT_TYPE_NAMES) {
      const account = (ACCOUNT_EVENT_TYPES as readonly string[]).includes(t);
      assert.equal(filter.schema.enum.includes(t), !account, t);
      assert.equal(mine.schema.enum.includes(t), account, t);
    }
    assert.equal(doc.paths['/v1/audit_events'].get['x-required-scope'], 'audit:read');
    assert.equal(doc.paths['/v1/secrets'].post['x-event-type'], 'secret.created');
    assert.match(doc.paths['/v1/secrets'].post.description, /Records the event `secret.created`/);
  });
});

describe('sign-ins', () => {
  test('a failed sign-in is recorded without the password; a successful one as session.created of the user', async () => {
    const user = await userWithPassword(h, PASSWORD, { workspaceId: s.workspaceId, role: 'member' });
    const wrong = 'the wrong password, typed';
    assert.equal((await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: user.email, password: wrong } })).statusCode, 401);
    assert.equal((await h.app.inject({ method: 'POST', url: '/v1/sessions', payload: { email: user.email, password: PASSWORD } })).statusCode, 201);
    const rows = await h.database.db.selectFrom('events').selectAll().where('resource_id', 'in', [user.userId]).orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.type, r.actor_kind]),
      [['session.failed', 'anonymous']],
    );
    assert.deepEqual(JSON.parse(rows[0]!.data), { email: user.email });
    const all = JSON.stringify(await h.database.db.selectFrom('events').selectAll().execute());
    assert.ok(!all.includes(wrong) && !all.includes(PASSWORD), 'no password in any event');
    const created = await h.database.db.selectFrom('events').selectAll().where('type', '=', 'session.created').where('actor_id', '=', user.userId).execute();
    assert.equal(created.length, 1);
    assert.equal(created[0]!.workspace_id, null, "a sign-in belongs to the user, not to a workspace's log");
  });
});

describe('retention', () => {
  test('events older than WSP_AUDIT_RETENTION_DAYS are purged by the hourly job; newer ones stay', async () => {
    // Sessions do not last a year: the seed's API token (no expiry) acts here.
    const snippet = async (name: string) => (await h.app.inject({ method: 'POST', url: '/v1/snippets', headers: as(s.apiToken), payload: { name, source: 'select 1' } })).json().id as string;
    const count = async (id: string) => ((await audit(`?resource_id=${id}`, s.apiToken, undefined)).json().data as Event[]).length;
    const old = await snippet('old news');
    h.clock.advanceSeconds(200 * 86_400);
    const recent = await snippet('recent news');
    h.clock.advanceSeconds(166 * 86_400);
    assert.equal(await count(old), 1, 'not purged before the job runs');
    await h.app.jobs.runDue();
    assert.equal(await count(old), 0, 'older than 365 days: purged');
    assert.equal(await count(recent), 1, '166 days old: kept');
  });
});
