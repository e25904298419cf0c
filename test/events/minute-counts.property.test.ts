import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sql } from 'kysely';
import { newId } from '../../src/shared/ids.js';
import { lastClosedMinute, minuteCountsStore, nextPiece, planCounts, pointOfMinute, rawCountsQuery, type Buckets, type EventFilter } from '../../src/events/minute-counts.js';
import { platformMetricsStore } from '../../src/platform-metrics/store.js';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { PROPERTY_SEED } from '../helpers/property.js';
import { eventRow } from '../helpers/event-rows.js';

/**
 * The event series count closed minutes ahead and the rest from the events
 * (src/events/minute-counts.ts). Whatever the range, step and time of asking, and whatever was
 * counted before, a series must equal counting every event of its range.
 */
const buckets = fc.record({ from: fc.integer({ min: 0, max: 100_000 }), step: fc.integer({ min: 1, max: 2_000 }), count: fc.integer({ min: 1, max: 40 }) });

test('the plan covers each second of the range exactly once: counted minutes lie wholly in one step and are closed; spans at most one per point and one more', () => {
  fc.assert(
    fc.property(buckets, fc.integer({ min: -10, max: 5_000 }), (b: Buckets, lastClosed) => {
      const plan = planCounts(b, lastClosed);
      const pieces: [number, number][] = plan.raw.map(([a, z]) => [a, z]);
      if (plan.minutes) {
        for (let m = plan.minutes.first; m <= plan.minutes.last; m++) {
          if (pointOfMinute(b, m) < 0) continue;
          if (m > lastClosed) assert.fail(`minute ${m} is not closed`);
          pieces.push([m * 60, m * 60 + 60]);
        }
      }
      pieces.sort((x, y) => x[0] - y[0]);
      let at = b.from;
      for (const [a, z] of pieces) {
        if (a !== at) assert.fail(`gap or overlap at ${at}: ${JSON.stringify(pieces)}`);
        assert.ok(z > a);
        at = z;
      }
      assert.equal(at, b.from + b.count * b.step);
      assert.ok(plan.raw.length <= b.count + 1, `${plan.raw.length} spans for ${b.count} points`);
    }),
    { seed: PROPERTY_SEED, numRuns: 2_000 },
  );
});

test('counting a day at a time reaches any range, each piece a day or less and joined to the span; a span apart from the range starts afresh', () => {
  const minute = fc.integer({ min: 0, max: 40 * 1440 });
  fc.assert(
    fc.property(fc.option(fc.tuple(minute, minute)), minute, fc.integer({ min: 0, max: 20 * 1440 }), (held, first, length) => {
      const last = first + length;
      let span = held ? { first: Math.min(...held), last: Math.max(...held) } : undefined;
      const apart = !span || span.last < first - 1 || span.first > last + 1;
      let rounds = 0;
      for (let piece = nextPiece(span, first, last); piece; piece = nextPiece(span, first, last)) {
        if (++rounds > 30) assert.fail('does not converge');
        if (piece.last - piece.first + 1 > 1440) assert.fail(`a piece of ${piece.last - piece.first + 1} minutes`);
        const joined = span && (rounds > 1 || !apart) ? piece.first === span.last + 1 || piece.last === span.first - 1 : piece.first === piece.spanFirst && piece.last === piece.spanLast;
        if (!joined) assert.fail(JSON.stringify({ span, piece }));
        span = { first: piece.spanFirst, last: piece.spanLast };
      }
      assert.ok(span && span.first <= first && span.last >= last);
      assert.ok(rounds <= Math.ceil((length + 1) / 1440) + Math.ceil((held ? 40 * 1440 : 0) / 1440) + 2);
      // A span starts at a day's start: the days first..last touch, at most one more than its length.
      if (apart) assert.ok(rounds <= Math.ceil((length + 1) / 1440) + 1, 'a span apart costs nothing to join');
    }),
    { seed: PROPERTY_SEED, numRuns: 2_000 },
  );
});

let h: TestDatabase;
before(async () => {
  h = await openTestDatabase();
});
after(() => h.cleanup());

const TYPES = ['secret.created', 'secret_version.accessed', 'dashboard.updated', 'session.created'];
const FILTERS: EventFilter[] = [{}, { type: 'secret.created' }, { type: 'secret.*' }, { exclude: ['session.created', 'secret_version.accessed'] }];
const matches = (type: string, f: EventFilter) => (f.type === undefined || (f.type.endsWith('.*') ? type.startsWith(f.type.slice(0, -1)) : type === f.type)) && !(f.exclude ?? []).includes(type);

test('a series equals counting every event of its range, asked in any order at any time after the events', async () => {
  const db = h.database.db;
  const engine = h.database.engine;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ at: fc.integer({ min: 1, max: 3_000 }), type: fc.constantFrom(...TYPES) }), { maxLength: 60 }),
      fc.array(
        fc.record({
          from: fc.integer({ min: 0, max: 2_800 }),
          step: fc.integer({ min: 1, max: 400 }),
          count: fc.integer({ min: 1, max: 12 }),
          asked: fc.integer({ min: 0, max: 4_000 }),
          filter: fc.nat(FILTERS.length - 1),
        }),
        {
          minLength: 1,
          maxLength: 6,
        },
      ),
      async (events, asks) => {
        // Each run its own workspace, its times shifted to a minute boundary far from other runs'.
        const ws = newId('ws');
        const epoch = 1_800_000_000 + Math.floor(Math.random() * 1_000) * 86_400;
        if (events.length) {
          await db
            .insertInto('events')
            .values(events.map((e) => eventRow(ws, e.type, epoch + e.at)))
            .execute();
        }
        for (const ask of asks) {
          const b = { from: epoch + ask.from, step: ask.step, count: ask.count };
          const f = FILTERS[ask.filter]!;
          // Before or after the events' minutes close: a minute is counted ahead only once closed.
          const now = epoch + ask.asked;
          const want = new Array<number>(b.count).fill(0);
          for (const e of events) {
            const i = Math.ceil((epoch + e.at - b.from) / b.step) - 1;
            if (i >= 0 && i < b.count && matches(e.type, f)) want[i]! += 1;
          }
          const got = await platformMetricsStore.events(db, { engine, workspaceId: ws, buckets: b, filter: f, now });
          assert.deepEqual(got, want, JSON.stringify({ b, f, now: now - epoch, lastClosed: lastClosedMinute(now) * 60 - epoch }));
        }
      },
    ),
    { seed: PROPERTY_SEED, numRuns: 60 },
  );
});

test('a series with more days to count than one series counts reads its events, and the next ones count the rest', async () => {
  const db = h.database.db;
  const engine = h.database.engine;
  const ws = newId('ws');
  const epoch = 1_700_006_400; // a minute boundary
  const days = 10;
  await db
    .insertInto('events')
    .values(Array.from({ length: days * 4 }, (_, i) => eventRow(ws, 'secret.created', epoch + Math.floor(i / 4) * 86_400 + 3_600 * (i % 4) + 7)))
    .execute();
  const b = { from: epoch, step: 86_400, count: days };
  const now = epoch + days * 86_400 + 3_600;
  const span = async () => {
    const row = await db.selectFrom('event_count_spans').selectAll().where('workspace_id', '=', ws).executeTakeFirst();
    return row && (Number(row.last_minute) - Number(row.first_minute) + 1) / 1440;
  };
  assert.deepEqual(await platformMetricsStore.events(db, { engine, workspaceId: ws, buckets: b, filter: {}, now }), new Array(days).fill(4));
  assert.equal(await span(), 8, 'eight days counted, the series answered from the events');
  assert.deepEqual(await platformMetricsStore.events(db, { engine, workspaceId: ws, buckets: b, filter: {}, now }), new Array(days).fill(4));
  assert.equal(await span(), days);
  const counted = await db
    .selectFrom('event_counts')
    .select(sql<number>`sum(n)`.as('n'))
    .where('workspace_id', '=', ws)
    .executeTakeFirstOrThrow();
  assert.equal(Number(counted.n), days * 4);
});

test('the events of a series are read through the index on created_at, whatever the filter and however many spans (SQLite: the plan; both engines: the counts)', async () => {
  const db = h.database.db;
  const engine = h.database.engine;
  const ws = newId('ws');
  const epoch = 1_700_000_000;
  // A table whose every second holds events, most of them another workspace's.
  const rows = Array.from({ length: 3_000 }, (_, i) => eventRow(i % 5 === 0 ? ws : 'ws_other', TYPES[i % TYPES.length]!, epoch + Math.floor(i / 3)));
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('events')
      .values(rows.slice(i, i + 500))
      .execute();
  const b = { from: epoch, step: 10, count: 100 };
  const spans: [number, number][] = Array.from({ length: 100 }, (_, i) => [epoch + i * 10, epoch + i * 10 + 3]);
  for (const f of FILTERS) {
    const want = new Array<number>(b.count).fill(0);
    rows.forEach((r) => {
      const i = Math.ceil((r.created_at - b.from) / b.step) - 1;
      if (r.workspace_id === ws && r.created_at - (epoch + i * 10) <= 3 && matches(r.type, f)) want[i]! += 1;
    });
    const got = new Array<number>(b.count).fill(0);
    await minuteCountsStore.countRaw(db, engine, ws, b, spans, f, got);
    assert.deepEqual(got, want, JSON.stringify(f));
    if (engine !== 'sqlite') continue;
    const q = rawCountsQuery(db, engine, ws, b, spans, f).compile();
    const plan = await db.executeQuery<{ detail: string }>({ ...q, sql: `explain query plan ${q.sql}` });
    const details = plan.rows.map((r) => r.detail);
    assert.ok(!details.some((d) => /^SCAN events\b/.test(d)), `a scan of every event for ${JSON.stringify(f)}: ${details.join(' | ')}`);
    assert.equal(details.filter((d) => /USING INDEX events_created/.test(d)).length, spans.length, details.join(' | '));
  }
});
