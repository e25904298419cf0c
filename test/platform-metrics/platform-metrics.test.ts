import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useComputeTestApp, runningMachine, suspend } from '../compute/setup.js';
import { installFixture } from '../installs/fixture.js';
import { notify } from '../../src/notifications/service.js';
import { gauge } from '../../src/platform-metrics/service.js';
import { platformMetricsStore } from '../../src/platform-metrics/store.js';
import { defaultOverviewLayout } from '../../src/dashboards/default-layout.js';
import type { Schemas } from '../helpers/test-app.js';

/** GET /v1/platform_metrics and their series (docs/spec-gaps.md, "Platform metrics and the console"), computed from the workspace's records and events. */
const t = useComputeTestApp();

type Series = Schemas['Series'];
const now = () => Math.floor(t.h.clock.nowMs() / 1000);
const get = (url: string, credential = t.s.owner.session, workspace: string | undefined = t.s.workspaceId) => t.h.app.inject({ method: 'GET', url, headers: as(credential, workspace) });
async function series(key: string, query: string, credential = t.s.owner.session): Promise<Series> {
  const res = await get(`/v1/platform_metrics/${key}/series?${query}`, credential);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}
const values = (s: Series) => s.points.map(([, v]) => v);
async function write(method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}) {
  const res = await t.h.app.inject({ method, url, headers: as(t.s.owner.session, t.s.workspaceId, headers), ...(payload ? { payload } : {}) });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
}

describe('the list of metrics', () => {
  test('names every metric of the contract with version, unit, kind and filters; a token needs dashboards:read', async () => {
    const res = await get('/v1/platform_metrics');
    assert.equal(res.statusCode, 200, res.body);
    const list = res.json().data as { key: string; version: number; unit: string; kind: string; filter_keys: string[] }[];
    assert.deepEqual(
      list.map((m) => m.key),
      ['machines_running', 'machines_suspended', 'monthly_cost_cents', 'renders', 'secret_accesses', 'writes', 'notifications_unread'],
    );
    assert.ok(list.every((m) => m.version === 1 && m.unit && (m.kind === 'gauge' || m.kind === 'counter')));
    assert.deepEqual(list.find((m) => m.key === 'renders')!.filter_keys, ['install', 'status']);
    const narrow = await write('POST', '/v1/api_tokens', { name: 'secrets only', scopes: ['secrets:read'] });
    const refused = await get('/v1/platform_metrics', narrow.token, undefined);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(firstError(refused.json()).metadata, { required_scope: 'dashboards:read' });
    const reader = await write('POST', '/v1/api_tokens', { name: 'dashboards', scopes: ['dashboards:read'] });
    assert.equal((await get('/v1/platform_metrics/writes/series', reader.token, undefined)).statusCode, 200);
    assert.equal((await get('/v1/platform_metrics', t.s.member.session)).statusCode, 200, 'any member reads them');
  });
});

describe('asking for a series', () => {
  test('an unknown key or version is 404 at that field; the current version is in metadata', async () => {
    const unknown = await get('/v1/platform_metrics/http_requests/series');
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(firstError(unknown.json()).path, ['key']);
    const stale = await get('/v1/platform_metrics/writes/series?version=2');
    assert.equal(stale.statusCode, 404);
    assert.deepEqual(firstError(stale.json()).path, ['version']);
    assert.deepEqual(firstError(stale.json()).metadata, { current_version: '1' });
    assert.equal((await get('/v1/platform_metrics/writes/series?version=1')).statusCode, 200);
  });

  test('a range backwards, too many points or a filter the metric does not take is 422 at that field', async () => {
    const cases: [string, string][] = [
      ['writes/series?from=100&to=100', 'from'],
      ['writes/series?from=0&to=1000000&step=60', 'step'],
      ['writes/series?install=inst_x', 'install'],
      ['renders/series?type=secret.created', 'type'],
      ['writes/series?step=0', 'step'],
    ];
    for (const [url, field] of cases) {
      const res = await get(`/v1/platform_metrics/${url}`);
      assert.equal(res.statusCode, 422, `${url}: ${res.body}`);
      assert.equal(firstError(res.json()).path?.at(-1), field, url);
    }
  });

  test('defaults: the last day to now in about 96 points, each at from + (i+1)·step', async () => {
    const s = await series('writes', '');
    assert.equal(s.step, 900);
    assert.equal(s.points.length, 96);
    assert.equal(s.from, now() - 86_400);
    s.points.forEach(([at], i) => assert.equal(at, s.from + (i + 1) * s.step));
    assert.equal(s.to, s.points.at(-1)![0]);
  });
});

describe('counters', () => {
  test('writes counts the events of each step, by type or resource, never sign-ins, secret reads or another workspace', async () => {
    const start = now();
    t.h.clock.advanceSeconds(30);
    const secret = await write('POST', '/v1/secrets', { name: 'counted' });
    await write('POST', `/v1/secrets/${secret.id}/versions`, { data: Buffer.from('x').toString('base64') });
    t.h.clock.advanceSeconds(60);
    await write('POST', '/v1/secrets', { name: 'counted too' });
    const version = (await get(`/v1/secrets/${secret.id}/versions`)).json().data[0];
    assert.equal((await get(`/v1/secrets/${secret.id}/versions/${version.id}:access`)).statusCode, 200);
    const other = await t.h.seed('Other');
    await t.h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(other.owner.session, other.workspaceId), payload: { name: 'not this one' } });
    const range = `from=${start}&to=${start + 120}&step=60`;
    assert.deepEqual(values(await series('writes', range)), [2, 1]);
    assert.deepEqual(values(await series('writes', `${range}&type=secret.created`)), [1, 1]);
    assert.deepEqual(values(await series('writes', `${range}&type=secret_version.*`)), [1, 0]);
    assert.deepEqual(values(await series('secret_accesses', range)), [0, 1]);
  });

  test('renders counts renders by install and by state', async () => {
    const f = installFixture(t.h, t.s);
    const start = now();
    t.h.clock.advanceSeconds(10);
    const { install, v2 } = await f.installed();
    await f.installed();
    await t.h.app.jobs.runDue();
    t.h.clock.advanceSeconds(100);
    await f.patch(install.id, { desired_version_id: v2.id });
    const range = `from=${start}&to=${start + 200}&step=100`;
    assert.deepEqual(values(await series('renders', range)), [2, 1]);
    assert.deepEqual(values(await series('renders', `${range}&install=${install.id}`)), [1, 1]);
    assert.deepEqual(values(await series('renders', `${range}&status=succeeded`)), [2, 0]);
  });
});

describe('gauges', () => {
  test('machines running and suspended follow creation, suspension and deletion', async () => {
    const start = now();
    t.h.clock.advanceSeconds(50);
    const machine = await runningMachine(t);
    t.h.clock.advanceSeconds(100);
    const suspending = await suspend(t, machine);
    assert.equal(suspending.statusCode, 200, suspending.body);
    await t.h.app.jobs.runDue();
    const cost = (await get('/v1/compute/suspensions', t.s.apiToken, undefined)).json<{ monthly_cost_cents: number }[]>()[0]!.monthly_cost_cents;
    t.h.clock.advanceSeconds(100);
    const suspended = (await get(`/v1/machines/${machine.id}`, t.s.apiToken, undefined)).json();
    assert.equal(suspended.status, 'suspended');
    await write('DELETE', `/v1/machines/${machine.id}`, undefined, { 'if-match': `"${suspended.etag}"` });
    t.h.clock.advanceSeconds(100);
    const range = `from=${start}&to=${start + 400}&step=100`;
    assert.deepEqual(values(await series('machines_running', range)), [1, 0, 0, 0]);
    assert.deepEqual(values(await series('machines_suspended', range)), [0, 1, 0, 0]);
    const monthly = values(await series('monthly_cost_cents', range));
    assert.ok(cost > 0);
    assert.deepEqual(monthly, [0, cost, 0, 0], 'a suspension in force costs its snapshot');
    assert.deepEqual(values(await series('machines_running', `${range}&cluster=cl_00000000000000000000000000`)), [0, 0, 0, 0]);
  });

  test('a gauge reads only what overlaps its range: suspensions and notices that ended before it are not read, machines deleted before it not counted', async () => {
    const db = t.h.database.db;
    const ws = t.s.workspaceId;
    // History that ends before the range: a machine made, suspended, deleted; a notice read.
    const gone = await runningMachine(t);
    t.h.clock.advanceSeconds(10);
    assert.equal((await suspend(t, gone)).statusCode, 200);
    await t.h.app.jobs.runDue();
    t.h.clock.advanceSeconds(10);
    const suspended = (await get(`/v1/machines/${gone.id}`, t.s.apiToken, undefined)).json();
    await write('DELETE', `/v1/machines/${gone.id}`, undefined, { 'if-match': `"${suspended.etag}"` });
    await t.h.app.jobs.runDue();
    const notice = { type: 'machine_expiry', resource_type: 'machine', resource_id: 'mch_01jabcdefghjkmnpqrstvwxyz1', title: 't', body: 'b', severity: 'info', context: {} };
    await notify(db, t.h.clock, { ...notice, userIds: [t.s.owner.userId] } as never);
    const unread = ((await get('/v1/notifications?limit=50')).json().data as { id: string; read_at: number | null }[]).filter((n) => n.read_at === null);
    for (const n of unread) await write('PATCH', `/v1/notifications/${n.id}/read`);
    t.h.clock.advanceSeconds(1000);
    const from = now();
    // In the range: one machine running (and whatever earlier tests left running).
    const alive = await runningMachine(t);
    t.h.clock.advanceSeconds(100);
    const until = from + 200;
    // The machines alive: what the machines list says now (the deleted one is not among them).
    const listed = (await get('/v1/machines?limit=100')).json().data as { id: string; status: string }[];
    const living = listed.filter((m) => ['creating', 'running', 'suspending', 'suspended', 'resuming'].includes(m.status));
    assert.ok(living.some((m) => m.id === alive.id) && !listed.some((m) => m.id === gone.id));
    assert.deepEqual(await platformMetricsStore.machinesAlive(db, ws, { from, step: 100, count: 2 }, undefined), [living.length, living.length]);
    const suspensions = await platformMetricsStore.suspensions(db, ws, from, until, undefined);
    assert.ok(
      suspensions.every((l) => l.end === null || l.end > from),
      JSON.stringify(suspensions),
    );
    assert.deepEqual(await platformMetricsStore.unread(db, t.s.owner.userId, from, until), []);
    // The series agrees: the machine deleted before the range is nowhere in it.
    const running = values(await series('machines_running', `from=${from}&to=${until}&step=100`));
    assert.deepEqual(running, [living.length, living.length]);
  });

  test("notifications unread are the caller's, from arrival until read; an API token has none (403)", async () => {
    const start = now();
    t.h.clock.advanceSeconds(10);
    const notice = { type: 'machine_expiry', resource_type: 'machine', resource_id: 'mch_01jabcdefghjkmnpqrstvwxyz0', title: 't', body: 'b', severity: 'info', context: {} };
    await notify(t.h.database.db, t.h.clock, { ...notice, userIds: [t.s.owner.userId] } as never);
    await notify(t.h.database.db, t.h.clock, { ...notice, userIds: [t.s.owner.userId, t.s.admin.userId] } as never);
    t.h.clock.advanceSeconds(100);
    const inbox = await get('/v1/notifications?limit=50');
    assert.equal(inbox.statusCode, 200, inbox.body);
    const mine = inbox.json().data as { id: string; read_at: number | null }[];
    await write('PATCH', `/v1/notifications/${mine.find((n) => n.read_at === null)!.id}/read`);
    const range = `from=${start}&to=${start + 200}&step=100`;
    assert.deepEqual(values(await series('notifications_unread', range)), [2, 1]);
    assert.deepEqual(values(await series('notifications_unread', range, t.s.admin.session)), [1, 1]);
    const byToken = await get(`/v1/platform_metrics/notifications_unread/series?${range}`, t.s.apiToken, undefined);
    assert.equal(byToken.statusCode, 403);
  });

  test('the overview layout names only metrics that exist, at their versions', async () => {
    const list = (await get('/v1/platform_metrics')).json().data as { key: string; version: number; filter_keys: string[] }[];
    for (const w of defaultOverviewLayout().widgets) {
      assert.equal(w.widget_type, 'platform_metric');
      if (w.widget_type !== 'platform_metric') continue;
      const m = list.find((x) => x.key === w.metric_key);
      assert.ok(m, `${w.metric_key} is a metric`);
      assert.equal(m.version, w.metric_version);
      for (const name of Object.keys(w.filter_bindings)) assert.ok(name === 'time' || m.filter_keys.includes(name), `${w.metric_key} takes ${name}`);
    }
  });

  test('a gauge counts an interval at each point from its start up to (not at) its end', () => {
    const b = { from: 0, step: 10, count: 4 };
    assert.deepEqual(gauge([{ start: 0, end: 20 }], b), [1, 0, 0, 0]);
    assert.deepEqual(gauge([{ start: 10, end: null }], b), [1, 1, 1, 1]);
    assert.deepEqual(gauge([{ start: 11, end: 31 }], b), [0, 1, 1, 0]);
    assert.deepEqual(
      gauge(
        [
          { start: 40, end: null },
          { start: 41, end: null },
        ],
        b,
      ),
      [0, 0, 0, 1],
    );
    assert.deepEqual(
      gauge(
        [
          { start: 0, end: 25, weight: 2.5 },
          { start: 15, end: null, weight: 1 },
        ],
        b,
        true,
      ),
      [2.5, 3.5, 1, 1],
    );
  });
});

describe('event series count closed minutes once (src/events/minute-counts.ts)', () => {
  /** A fresh workspace's owner, and its minute rows' total. */
  async function fresh(name: string) {
    const w = await t.h.seed(name);
    const post = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await t.h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(w.owner.session, w.workspaceId), payload: { name: `${name} ${now()} ${i}` } });
        assert.equal(res.statusCode, 201, res.body);
      }
    };
    const counted = async () => {
      // The secrets' minutes: a span is counted from its day's start, which holds the seed's own events.
      const rows = await t.h.database.db.selectFrom('event_counts').select(['minute', 'type', 'n']).where('workspace_id', '=', w.workspaceId).where('type', '=', 'secret.created').execute();
      return rows.map((r) => ({ minute: Number(r.minute), type: r.type, n: Number(r.n) }));
    };
    const writes = async (query: string) => {
      const res = await get(`/v1/platform_metrics/writes/series?${query}`, w.owner.session, w.workspaceId);
      assert.equal(res.statusCode, 200, res.body);
      return values(res.json());
    };
    return { w, post, counted, writes };
  }
  /** The clock moved to the next minute's start plus `s` seconds. */
  const atMinute = (s = 0) => {
    const m = Math.ceil((now() + 1) / 60) * 60;
    t.h.clock.set((m + s) * 1000);
    return m;
  };

  test('closed minutes are counted into event_counts once and read from there; the minutes a boundary cuts and the open ones from the events', async () => {
    const f = await fresh('Counted');
    const base = atMinute(10);
    await f.post(1); // minute base/60
    t.h.clock.advanceSeconds(60);
    await f.post(2); // the next
    t.h.clock.advanceSeconds(60);
    await f.post(1); // the one after
    t.h.clock.advanceSeconds(600);
    assert.deepEqual(await f.counted(), [], 'nothing is counted before a series asks');
    assert.deepEqual(await f.writes(`from=${base}&to=${base + 180}&step=60`), [1, 2, 1]);
    const m = base / 60;
    assert.deepEqual(
      (await f.counted()).sort((a, b) => a.minute - b.minute),
      [
        { minute: m, type: 'secret.created', n: 1 },
        { minute: m + 1, type: 'secret.created', n: 2 },
        { minute: m + 2, type: 'secret.created', n: 1 },
      ],
    );
    // Read from the counts (event_prefix: the writes of the day up to each minute): a changed count shows; the events are not read again for those minutes.
    const db = t.h.database.db;
    const shift = (by: number) =>
      db
        .updateTable('event_prefix')
        .set((eb) => ({ p: eb('p', '+', by) }))
        .where('workspace_id', '=', f.w.workspaceId)
        .where('key', '=', 'w')
        .where('minute', '>=', m)
        .where('minute', '<', Math.floor(m / 1440) * 1440 + 1440)
        .execute();
    await shift(10);
    assert.deepEqual(await f.writes(`from=${base}&to=${base + 180}&step=60`), [11, 2, 1]);
    // Boundaries cutting minutes: (base+30, base+90] holds the two of base+70, (base+90, base+150] the one of base+130; from the events.
    assert.deepEqual(await f.writes(`from=${base + 30}&to=${base + 150}&step=60`), [2, 1]);
    // A step of 90 s: the first point holds a counted minute (11) and half of the next (2, from the events).
    assert.deepEqual(await f.writes(`from=${base}&to=${base + 180}&step=90`), [13, 1]);
    await shift(-10);
    // The minutes not yet closed are counted from the events, and not stored.
    const open = now();
    await f.post(3);
    assert.deepEqual(await f.writes(`from=${open - 60}&to=${open}&step=60`), [3]);
    assert.ok(
      (await f.counted()).every((r) => r.minute <= m + 2),
      'an open minute is never stored',
    );
    // Asked again across all of it, each minute counted once: 1 + 2 + 1 + 3.
    const total = (await f.writes(`from=${base}&to=${open}&step=${open - base}`)).reduce((a, b) => a + b, 0);
    assert.equal(total, 7);
  });

  test('series asked at once count each minute once, and a series after a gap counts the minutes between', async () => {
    const f = await fresh('Counted at once');
    const base = atMinute(5);
    for (let i = 0; i < 5; i++) {
      await f.post(i + 1);
      t.h.clock.advanceSeconds(60);
    }
    t.h.clock.advanceSeconds(600);
    const range = `from=${base}&to=${base + 300}&step=60`;
    const answers = await Promise.all(Array.from({ length: 6 }, () => f.writes(range)));
    for (const a of answers) assert.deepEqual(a, [1, 2, 3, 4, 5]);
    const rows = await f.counted();
    assert.equal(rows.length, 5, JSON.stringify(rows));
    assert.equal(
      rows.reduce((a, r) => a + r.n, 0),
      15,
    );
    // Later minutes, with a stretch between that no series asked for: the span grows over it.
    const later = atMinute(5) + 3600;
    t.h.clock.set((later + 5) * 1000);
    await f.post(2);
    t.h.clock.advanceSeconds(900);
    assert.deepEqual(await f.writes(`from=${later}&to=${later + 60}&step=60`), [2]);
    assert.deepEqual(await f.writes(`from=${base}&to=${later + 60}&step=${later + 60 - base}`), [17]);
    const span = await t.h.database.db.selectFrom('event_count_spans').selectAll().where('workspace_id', '=', f.w.workspaceId).executeTakeFirstOrThrow();
    // From the start of the first minute's day (event_prefix sums each day from its start).
    assert.deepEqual([Number(span.first_minute), Number(span.last_minute)], [Math.floor(base / 60 / 1440) * 1440, later / 60]);
  });

  test('the retention purge forgets the counts of the days it reached; the minutes it cut are counted again from the events left', async () => {
    const f = await fresh('Counted and purged');
    const base = atMinute(0);
    t.h.clock.set((base + 10) * 1000);
    await f.post(1);
    t.h.clock.set((base + 50) * 1000);
    await f.post(2);
    t.h.clock.set((base + 130) * 1000);
    await f.post(1);
    t.h.clock.advanceSeconds(600);
    assert.deepEqual(await f.writes(`from=${base}&to=${base + 180}&step=60`), [3, 0, 1]);
    assert.equal((await f.counted()).length, 2);
    // A year on, the purge cuts the first minute at base + 30: the event of base + 10 goes, those of base + 50 stay.
    t.h.clock.set((base + 30 + 365 * 86_400) * 1000);
    await t.h.app.jobs.runDue();
    const rows = await t.h.database.db.selectFrom('events').select('created_at').where('workspace_id', '=', f.w.workspaceId).where('type', '=', 'secret.created').execute();
    assert.deepEqual(
      rows.map((r) => Number(r.created_at)).sort((a, b) => a - b),
      [base + 50, base + 50, base + 130],
    );
    // The counts of the whole day it cut go (event_prefix sums each day from its start): the spans start at the next day.
    const nextDay = Math.ceil((base / 60 + 1) / 1440) * 1440;
    assert.deepEqual(
      (await f.counted()).map((r) => r.minute),
      base / 60 + 2 >= nextDay ? [base / 60 + 2] : [],
      'the day the purge cut is forgotten',
    );
    // A year on, the owner's session has lapsed: the seed's token (no expiry) reads.
    const res = await get(`/v1/platform_metrics/writes/series?from=${base}&to=${base + 180}&step=60`, f.w.apiToken, f.w.workspaceId);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(values(res.json()), [2, 0, 1], 'recounted from the two events left');
  });
});

test('a series reads the clock once: its buckets and what counts as a closed minute are cut at the same second', async () => {
  const { createPlatformMetricsService } = await import('../../src/platform-metrics/service.js');
  let reads = 0;
  // A clock that moves a second at every read: two reads in one series would disagree.
  const ticking = { nowMs: () => t.h.clock.nowMs() + 1000 * reads++ };
  const service = createPlatformMetricsService({ db: t.h.database.db, clock: ticking, engine: t.h.database.engine, log: { warn: () => {} } as never });
  const ctx = { principal: { kind: 'api_token', tokenId: 'tok_x', workspaceId: t.s.workspaceId, scopes: null }, workspaceId: t.s.workspaceId, role: null, actorId: 'tok_x' } as never;
  for (const key of ['writes', 'secret_accesses']) {
    reads = 0;
    const s = await service.series(ctx, key, {});
    assert.equal(reads, 1, key);
    assert.equal(s.points.length > 0, true);
  }
});
