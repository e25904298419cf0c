import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sql } from 'kysely';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';
import { newId } from '../../src/shared/ids.js';
import { renderStore } from '../../src/installs/renders/store.js';
import type { RendersTable, RenderState } from '../../src/installs/tables.js';
import { RENDER_PREFIX_BACKFILL } from '../../src/db/migrations/0034_render_prefix.js';
import { PROPERTY_SEED } from '../helpers/property.js';

/**
 * The platform metric `renders` reads day sums kept by the renders' writes (render_prefix,
 * migration 0034, docs/decisions.md, "The renders series: day sums kept by the renders' writes"):
 * whatever the renders, their states' changes (the filter is the state a render is in now), the
 * range, step and filter, a series must equal counting the renders themselves; writes at once (on
 * PostgreSQL, in transactions that overlap) must count each render once; and the kept sums must
 * answer as migration 0034's back-fill from the renders does.
 */
const h = useTestApp();
const DAY = 86_400;
const STATES: RenderState[] = ['queued', 'running', 'succeeded', 'failed', 'superseded', 'awaiting_merge', 'canceled'];

/** Each run a week after the last, far past the renders the API made. */
let nextEpoch = 2_000_000_000 - (2_000_000_000 % DAY);
let seq = 1_000;

test('the renders series equals counting the renders, whatever their states became; writes at once count each render once; the kept sums answer as their back-fill', { timeout: 600_000 }, async () => {
  const db = h.database.db;
  const f = installFixture(h, h.seeded);
  const installs = [(await f.installed()).install.id as string, (await f.installed()).install.id as string, (await f.installed()).install.id as string];
  const template = await db.selectFrom('renders').selectAll().where('install_id', '=', installs[0]!).executeTakeFirstOrThrow();
  const ws = template.workspace_id;
  const pv = new Map<string, string>();
  for (const id of installs) pv.set(id, (await db.selectFrom('renders').select('package_version_id').where('install_id', '=', id).executeTakeFirstOrThrow()).package_version_id);
  const filters = [{}, { install: installs[1] }, { status: 'succeeded' }, { status: 'queued' }, { install: installs[2], status: 'failed' }, { install: 'inst_none' }, { status: 'nothing' }];

  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          at: fc.integer({ min: 0, max: 3 * DAY }),
          install: fc.nat(installs.length - 1),
          state: fc.constantFrom(...STATES),
          moves: fc.array(fc.constantFrom(...STATES), { maxLength: 3 }),
          // A move outside any transaction (the render job's start), or in one.
          alone: fc.boolean(),
        }),
        { maxLength: 40 },
      ),
      fc.array(
        fc.record({
          from: fc.integer({ min: -DAY, max: 3 * DAY }),
          step: fc.oneof(fc.integer({ min: 1, max: 4_000 }), fc.integer({ min: 3_600, max: 2 * DAY }), fc.constantFrom(60, 600, DAY)),
          count: fc.integer({ min: 1, max: 30 }),
          filter: fc.nat(filters.length - 1),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      fc.integer({ min: 1, max: 8 }),
      async (renders, asks, together) => {
        const epoch = nextEpoch;
        nextEpoch += 7 * DAY;
        const made: { id: string; state: RenderState; install: string; at: number; moves: RenderState[]; alone: boolean }[] = [];
        // Made `together` at a time, each in its own transaction: on PostgreSQL they overlap.
        for (let i = 0; i < renders.length; i += together) {
          await Promise.all(
            renders.slice(i, i + together).map(async (r) => {
              const install = installs[r.install]!;
              const row: RendersTable = {
                ...template,
                id: newId('rnd'),
                install_id: install,
                package_version_id: pv.get(install)!,
                seq: ++seq,
                state: r.state,
                created_at: epoch + r.at,
                updated_at: epoch + r.at,
              };
              await db.transaction().execute((trx) => renderStore.insert(trx, row));
              made.push({ id: row.id, state: r.state, install, at: row.created_at, moves: r.moves, alone: r.alone });
            }),
          );
        }
        for (let i = 0; i < made.length; i += together) {
          await Promise.all(
            made.slice(i, i + together).map(async (m) => {
              for (const to of m.moves) {
                const move = (d: typeof db) => renderStore.transition(d, m.id, m.state, { state: to, updated_at: m.at });
                assert.ok(m.alone ? await move(db) : await db.transaction().execute(move));
                m.state = to;
              }
              // From a state it is not in: nothing moves, nothing is counted.
              assert.equal(await renderStore.transition(db, m.id, m.state === 'failed' ? 'succeeded' : 'failed', { state: 'queued', updated_at: m.at }), false);
            }),
          );
        }
        for (const a of asks) {
          const b = { from: epoch + a.from, step: a.step, count: a.count };
          const filter = filters[a.filter]!;
          const want = new Array<number>(b.count).fill(0);
          for (const m of made) {
            const i = Math.ceil((m.at - b.from) / b.step) - 1;
            if (i >= 0 && i < b.count && (!filter.install || filter.install === m.install) && (!filter.status || filter.status === m.state)) want[i]! += 1;
          }
          const got = await renderStore.countsByBucket(db, ws, b, filter);
          assert.deepEqual(
            got.map((r) => r.n),
            want,
            JSON.stringify({ b: { ...b, from: a.from }, filter }),
          );
          const raw = new Array<number>(b.count).fill(0);
          for (const r of await renderStore.countedByBucket(db, ws, b, filter)) if (Number(r.b) >= 0 && Number(r.b) < b.count) raw[Number(r.b)] = Number(r.n);
          assert.deepEqual(raw, want);
        }
      },
    ),
    { seed: PROPERTY_SEED, numRuns: 60 },
  );

  // Every second of every key answers the same from the kept sums and from the back-fill's.
  const read = async () => (await db.selectFrom('render_prefix').selectAll().execute()).map((r) => ({ ws: r.workspace_id, key: r.key, at: Number(r.created_at), p: Number(r.p) }));
  const kept = await read();
  await db.deleteFrom('render_prefix').execute();
  for (const s of RENDER_PREFIX_BACKFILL) await sql.raw(s).execute(db);
  const filled = await read();
  const answer = (rows: typeof kept, ws: string, key: string, at: number) =>
    rows.filter((r) => r.ws === ws && r.key === key && r.at <= at && r.at >= at - (at % DAY)).reduce((best, r) => (best && best.at > r.at ? best : r), undefined as (typeof kept)[number] | undefined)
      ?.p ?? 0;
  const asked = new Set([...kept, ...filled].map((r) => JSON.stringify([r.ws, r.key, r.at])));
  const wrong: string[] = [];
  for (const k of asked) {
    const [w, key, at] = JSON.parse(k) as [string, string, number];
    const x = answer(kept, w, key, at);
    const y = answer(filled, w, key, at);
    if (x !== y) wrong.push(`${key} at ${at}: kept ${x}, back-filled ${y}`);
  }
  assert.deepEqual(wrong, []);
  assert.ok(filled.length > 100, `${filled.length} rows back-filled`);
});
