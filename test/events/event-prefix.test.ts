import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { newId } from '../../src/shared/ids.js';
import { minuteCountsStore, NOT_WRITES, planCounts, pointOfMinute, splitCutMinutes, type EventFilter } from '../../src/events/minute-counts.js';
import { platformMetricsStore } from '../../src/platform-metrics/store.js';
import { migrate } from '../../src/db/database.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { PROPERTY_SEED } from '../helpers/property.js';
import { eventRow } from '../helpers/event-rows.js';

/**
 * The event series read each point's days as differences of day sums from event_prefix
 * (migration 0031, docs/decisions.md, "The event series: a day's sums from its start"): whatever
 * the range, step, filter and time of asking, and whatever retention purged, a series must equal
 * counting every event of its range; and the sums must stay what migration 0031 back-fills from
 * the counted minutes.
 */

test('the minutes boundaries cut: each second of a range counted once, by a whole minute, a span of events or a cut minute; a cut read on its smaller side, in its two points', () => {
  fc.assert(
    fc.property(
      fc.record({ from: fc.integer({ min: 0, max: 100_000 }), step: fc.integer({ min: 1, max: 2_000 }), count: fc.integer({ min: 1, max: 40 }) }),
      fc.integer({ min: -10, max: 5_000 }),
      (b, lastClosed) => {
        const plan = planCounts(b, lastClosed);
        const { raw, cuts } = splitCutMinutes(b, plan);
        const pieces: [number, number][] = raw.map(([a, z]) => [a, z]);
        const cut = new Set(cuts.map((c) => c.minute));
        if (plan.minutes) {
          for (let m = plan.minutes.first; m <= plan.minutes.last; m++) if (pointOfMinute(b, m) >= 0) pieces.push([m * 60, m * 60 + 60]);
        }
        for (const c of cuts) {
          assert.ok(plan.minutes && c.minute >= plan.minutes.first && c.minute <= plan.minutes.last, 'a cut minute is counted');
          assert.ok(c.read[1] - c.read[0] <= 30, 'the smaller side');
          assert.equal(Math.abs(c.readPoint - c.otherPoint), 1);
          const boundary = b.from + Math.max(c.readPoint, c.otherPoint) * b.step;
          assert.ok(c.read[0] === boundary || c.read[1] === boundary);
          assert.ok(pointOfMinute(b, c.minute) < 0);
          pieces.push([c.minute * 60, c.minute * 60 + 60]);
        }
        assert.equal(cut.size, cuts.length);
        pieces.sort((x, y) => x[0] - y[0]);
        let at = b.from;
        for (const [a, z] of pieces) {
          if (a !== at) assert.fail(`gap or overlap at ${at}: ${JSON.stringify({ pieces, cuts })}`);
          assert.ok(z > a);
          at = z;
        }
        assert.equal(at, b.from + b.count * b.step);
      },
    ),
    { seed: PROPERTY_SEED, numRuns: 3_000 },
  );
});

let h: TestDatabase;
before(async () => {
  h = await openTestDatabase();
});
after(() => h.cleanup());

const TYPES = ['secret.created', 'secret_version.accessed', 'secret_version.created', 'dashboard.updated', 'session.created', 'session.failed'];
const WRITES = { exclude: [...NOT_WRITES] };
/** The filters the series ask (src/platform-metrics/service.ts), and two the roll-ups do not keep. */
const FILTERS: EventFilter[] = [
  { type: 'secret_version.accessed' },
  WRITES,
  { ...WRITES, type: 'secret.created' },
  { ...WRITES, type: 'secret_version.*' },
  { ...WRITES, type: 'session.created' },
  { type: 'secret.*' },
  {},
  { exclude: ['session.created'] },
];
const matches = (type: string, f: EventFilter) => (f.type === undefined || (f.type.endsWith('.*') ? type.startsWith(f.type.slice(0, -1)) : type === f.type)) && !(f.exclude ?? []).includes(type);

const DAY = 86_400;
/** Each run far after the last, so that one run's purge reaches only runs before it. */
let nextEpoch = 1_800_000_000 - (1_800_000_000 % DAY);

async function sums() {
  const rows = await h.database.db.selectFrom('event_prefix').selectAll().execute();
  return rows.map((r) => `${r.workspace_id} ${r.key} ${Number(r.minute)} ${Number(r.p)}`).sort();
}

test('a series over days equals counting every event of its range, through purges; the day sums equal their back-fill from the counted minutes', async () => {
  const db = h.database.db;
  const engine = h.database.engine;
  const { backfillPrefix } = await import('../../src/db/migrations/0031_event_prefix.js');
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ at: fc.integer({ min: 1, max: 4 * DAY }), type: fc.constantFrom(...TYPES) }), { maxLength: 80 }),
      fc.array(
        fc.oneof(
          fc.record({
            from: fc.integer({ min: 0, max: 4 * DAY }),
            step: fc.oneof(fc.integer({ min: 1, max: 4_000 }), fc.integer({ min: 3_600, max: 2 * DAY }), fc.constantFrom(600, 3_600, DAY)),
            count: fc.integer({ min: 1, max: 20 }),
            asked: fc.integer({ min: 0, max: 6 * DAY }),
            filter: fc.nat(FILTERS.length - 1),
          }),
          fc.record({ purge: fc.integer({ min: 0, max: 4 * DAY }) }),
        ),
        { minLength: 1, maxLength: 6 },
      ),
      async (events, steps) => {
        const ws = newId('ws');
        const epoch = nextEpoch;
        nextEpoch += 10 * DAY;
        let alive = events.map((e) => ({ ...e, at: epoch + e.at }));
        if (alive.length) {
          await db
            .insertInto('events')
            .values(alive.map((e) => eventRow(ws, e.type, e.at)))
            .execute();
        }
        for (const s of steps) {
          if ('purge' in s) {
            // What the audit log's retention does (src/audit/service.ts, purge).
            const before = epoch + s.purge;
            await db.deleteFrom('events').where('created_at', '<', before).execute();
            await minuteCountsStore.purge(db, before);
            alive = alive.filter((e) => e.at >= before);
            continue;
          }
          const b = { from: epoch + s.from, step: s.step, count: s.count };
          const f = FILTERS[s.filter]!;
          const want = new Array<number>(b.count).fill(0);
          for (const e of alive) {
            const i = Math.ceil((e.at - b.from) / b.step) - 1;
            if (i >= 0 && i < b.count && matches(e.type, f)) want[i]! += 1;
          }
          const now = epoch + s.asked;
          // A series counts eight days at most before answering: the next one counts the rest.
          for (let i = 0; i < 2; i++) {
            const got = await platformMetricsStore.events(db, { engine, workspaceId: ws, buckets: b, filter: f, now });
            assert.deepEqual(got, want, JSON.stringify({ b: { ...b, from: s.from }, f, now: s.asked }));
          }
        }
        const kept = await sums();
        await db.deleteFrom('event_prefix').execute();
        await backfillPrefix(db);
        assert.deepEqual(await sums(), kept);
      },
    ),
    { seed: PROPERTY_SEED, numRuns: 50 },
  );
});

/** Counts the rows each table's statements return. */
function rowsRead(): { plugin: KyselyPlugin; rows: Map<string, number> } {
  const tables = new Map<unknown, string>();
  const rows = new Map<string, number>();
  return {
    rows,
    plugin: {
      transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
        const from = (args.node as { from?: { froms?: { table?: { identifier?: { name?: string } } }[] } }).from;
        tables.set(args.queryId, from?.froms?.[0]?.table?.identifier?.name ?? '?');
        return args.node;
      },
      async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
        const t = tables.get(args.queryId) ?? '?';
        rows.set(t, (rows.get(t) ?? 0) + args.result.rows.length);
        return args.result;
      },
    },
  };
}

test("a 30-day series of 96 points reads two day sums or so a point, not every minute's count", async () => {
  const db = h.database.db;
  const engine = h.database.engine;
  const ws = newId('ws');
  const epoch = nextEpoch + 1_234;
  nextEpoch += 40 * DAY;
  // An event every five minutes for 30 days.
  const rows = Array.from({ length: (30 * DAY) / 300 }, (_, i) => eventRow(ws, 'secret.created', epoch + i * 300 + 7));
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('events')
      .values(rows.slice(i, i + 500))
      .execute();
  const b = { from: epoch, step: Math.ceil((30 * DAY) / 96), count: 96 };
  const now = epoch + 30 * DAY + 3_600;
  for (let i = 0; i < 4; i++) await platformMetricsStore.events(db, { engine, workspaceId: ws, buckets: b, filter: WRITES, now });
  const { plugin, rows: read } = rowsRead();
  const got = await platformMetricsStore.events(db.withPlugin(plugin), { engine, workspaceId: ws, buckets: b, filter: WRITES, now });
  assert.equal(
    got.reduce((a, z) => a + z, 0),
    rows.length,
  );
  // Each point (7.5 hours): its days' last sums and the one before its start (at most three), and the minute its boundary cuts
  // (two sums and the count of its smaller side); every minute's count would be 8,640 rows.
  const counted = [...read].filter(([t]) => t !== 'event_count_spans').reduce((a, [, n]) => a + n, 0);
  assert.ok(counted <= 96 * 6, `${counted} rows read: ${JSON.stringify([...read])}`);
  assert.equal(read.get('event_counts') ?? 0, 0, JSON.stringify([...read]));
});

test('migration 0031 rolls up the minutes counted before it, and only those of each span', async () => {
  const t = await openTestDatabase('0030_event_resource_type');
  try {
    const db = t.database.db;
    const engine = t.database.engine;
    const epoch = 1_700_006_400; // a day boundary
    const m0 = epoch / 60;
    const events = Array.from({ length: 300 }, (_, i) => eventRow('ws_1', TYPES[i % TYPES.length]!, epoch + i * 577 + 1));
    await db.insertInto('events').values(events).execute();
    // Counted as 0019 counts them: the span's minutes, and one minute before it, left counted by a span started afresh since.
    const first = m0 + 30;
    const last = m0 + 2 * 1440 + 17;
    const counts = new Map<string, { workspace_id: string; minute: number; type: string; resource_type: string; n: number }>();
    for (const e of events) {
      const minute = Math.ceil(e.created_at / 60) - 1;
      if ((minute < first || minute > last) && minute !== m0 + 9) continue;
      const k = `${minute} ${e.type}`;
      const row = counts.get(k) ?? { workspace_id: 'ws_1', minute, type: e.type, resource_type: e.resource_type, n: 0 };
      row.n += 1;
      counts.set(k, row);
    }
    await db
      .insertInto('event_counts')
      .values([...counts.values()])
      .execute();
    await db.insertInto('event_count_spans').values({ workspace_id: 'ws_1', first_minute: first, last_minute: last }).execute();
    await migrate(t.database);
    const b = { from: epoch, step: 3_600, count: 72 };
    const now = epoch + 4 * DAY;
    for (const f of FILTERS) {
      const want = new Array<number>(b.count).fill(0);
      for (const e of events) {
        const i = Math.ceil((e.created_at - b.from) / b.step) - 1;
        if (i >= 0 && i < b.count && matches(e.type, f)) want[i]! += 1;
      }
      assert.deepEqual(await platformMetricsStore.events(db, { engine, workspaceId: 'ws_1', buckets: b, filter: f, now }), want, JSON.stringify(f));
    }
    // The span starts at the first whole day after 0019's first minute; the day before it was counted again.
    const span = await db.selectFrom('event_count_spans').selectAll().where('workspace_id', '=', 'ws_1').executeTakeFirstOrThrow();
    assert.equal(Number(span.first_minute), m0);
  } finally {
    await t.cleanup();
  }
});
