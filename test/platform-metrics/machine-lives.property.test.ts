import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { MachinesTable, MachineStatus } from '../../src/compute/tables.js';
import { machineStore } from '../../src/compute/machines/store.js';
import { newId } from '../../src/shared/ids.js';
import { useComputeTestApp, runningMachine } from '../compute/setup.js';
import { PROPERTY_SEED } from '../helpers/property.js';

/**
 * `machines_running` reads a running sum kept by the machines' status changes (machine_life_prefix,
 * migration 0035; docs/decisions.md, "machines_running: a running sum kept by the machines' status
 * changes"). Whatever the machines' histories, the order their writes come in (one for an earlier
 * second after one for a later), writes at once (on PostgreSQL, transactions that overlap) and
 * moves from a status the machine is not in (which change nothing), the count at any second, of
 * any cluster and region, must be the machines whose status then was one that lives.
 */
const STATUSES: MachineStatus[] = ['creating', 'running', 'suspending', 'suspended', 'resuming', 'deleting', 'failed', 'expired'];
const LIVES = new Set<MachineStatus>(['creating', 'running', 'suspending', 'suspended', 'resuming']);

let template: MachinesTable;
let clusters: string[];
const t = useComputeTestApp(
  {},
  {
    setup: async () => {
      const m = await runningMachine(t);
      const db = t.h.database.db;
      template = await db.selectFrom('machines').selectAll().where('id', '=', m.id).executeTakeFirstOrThrow();
      const other = newId('cl');
      const at = template.created_at;
      await db
        .insertInto('clusters')
        .values({ id: other, workspace_id: template.workspace_id, name: 'other', description: null, region: null, is_default: 0, etag: 'e', created_at: at, updated_at: at })
        .execute();
      clusters = [template.cluster_id, other];
    },
  },
);

/** A machine's statuses from the second each began, in the order they were written. */
interface History {
  cluster: string;
  region: string;
  changes: { at: number; status: MachineStatus }[];
}

/** Whether the machine lived at the end of second `at`: its last status written for a second at or before it. */
function livedAt(h: History, at: number): boolean {
  const last = h.changes.filter((c) => c.at <= at).at(-1);
  return last !== undefined && LIVES.has(last.status);
}

const machineArb = fc.record({
  start: fc.integer({ min: 0, max: 1000 }),
  cluster: fc.nat(1),
  region: fc.constantFrom('fsn1', 'nbg1'),
  first: fc.constantFrom<MachineStatus>('creating', 'running', 'failed'),
  moves: fc.array(fc.record({ after: fc.integer({ min: 0, max: 300 }), to: fc.constantFrom(...STATUSES) }), { maxLength: 5 }),
});

test('the machines alive at any second, of any cluster and region, are those whose status then lived, however their writes came', { timeout: 600_000 }, async () => {
  const db = t.h.database.db;
  const ws = template.workspace_id;
  // The machines made through the API before (the setup's): running since their creation.
  const histories: History[] = (await db.selectFrom('machines').selectAll().where('workspace_id', '=', ws).execute()).map((m) => ({
    cluster: m.cluster_id,
    region: m.location,
    changes: [{ at: m.created_at, status: m.status }],
  }));
  let base = Math.floor(t.h.clock.nowMs() / 1000) + 10_000;
  const scopes = () => [{}, { cluster: clusters[0] }, { cluster: clusters[1] }, { region: 'fsn1' }, { region: 'nbg1' }, { cluster: clusters[1], region: 'fsn1' }, { region: 'none' }];
  await fc.assert(
    fc.asyncProperty(
      fc.array(machineArb, { maxLength: 10 }),
      fc.integer({ min: 1, max: 6 }),
      fc.array(fc.record({ from: fc.integer({ min: -200, max: 2600 }), step: fc.integer({ min: 1, max: 400 }), count: fc.integer({ min: 1, max: 12 }), scope: fc.nat(6) }), {
        minLength: 1,
        maxLength: 4,
      }),
      async (machines, together, asks) => {
        // Each run's history lies after the last one's; the machines of earlier runs still count.
        base += 5_000;
        const made = machines.map((m) => ({ m, h: { cluster: clusters[m.cluster]!, region: m.region, changes: [] as History['changes'] } }));
        // `together` machines at a time, each its own writes in order: on PostgreSQL their transactions overlap.
        for (let i = 0; i < made.length; i += together) {
          await Promise.all(
            made.slice(i, i + together).map(async ({ m, h }) => {
              const id = newId('mch');
              let at = base + m.start;
              await machineStore.insert(db, {
                ...template,
                id,
                cluster_id: h.cluster,
                location: h.region,
                hostname: `p-${id.slice(-8).toLowerCase()}`,
                status: m.first,
                etag: id,
                created_at: at,
                updated_at: at,
              });
              h.changes.push({ at, status: m.first });
              let status = m.first;
              for (const move of m.moves) {
                at += move.after;
                // From a status it is not in: nothing moves, nothing is counted.
                const other = STATUSES.find((s) => s !== status && LIVES.has(s) !== LIVES.has(move.to))!;
                assert.equal(await machineStore.transition(db, id, other, { status: move.to, updated_at: at }), false);
                assert.ok(await machineStore.transition(db, id, status, { status: move.to, updated_at: at }));
                h.changes.push({ at, status: move.to });
                status = move.to;
              }
            }),
          );
        }
        histories.push(...made.map((x) => x.h));
        const ask = async (ats: number[], scope: { cluster?: string; region?: string }, what: unknown) => {
          const want = ats.map((at) => histories.filter((h) => (!scope.cluster || h.cluster === scope.cluster) && (!scope.region || h.region === scope.region) && livedAt(h, at)).length);
          assert.deepEqual(await machineStore.aliveAt(db, ws, ats, scope), want, JSON.stringify({ what, scope, ats }));
        };
        for (const a of asks)
          await ask(
            Array.from({ length: a.count }, (_, i) => base + a.from + (i + 1) * a.step),
            scopes()[a.scope]!,
            a,
          );
        // Each second a status changed at, and the one before it: where a life's start or end is off by one, it shows.
        const edges = [...new Set(made.flatMap(({ h }) => h.changes.flatMap((c) => [c.at - 1, c.at])))].sort((x, y) => x - y);
        if (edges.length) for (const scope of scopes()) await ask(edges, scope, 'edges');
      },
    ),
    { seed: PROPERTY_SEED, numRuns: 60 },
  );
});
