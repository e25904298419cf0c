import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/tables.js';
import type { MachineStatus } from '../../src/compute/tables.js';
import { newId, ulid } from '../../src/shared/ids.js';
import { gauge } from '../../src/platform-metrics/service.js';
import { platformMetricsStore, type Buckets, type Interval } from '../../src/platform-metrics/store.js';
import { useComputeTestApp, runningMachine } from '../compute/setup.js';
import { PROPERTY_SEED } from '../helpers/property.js';

/**
 * The machines gauge reads only the lives that overlap the range asked (src/compute/machines/store.ts, `lives`);
 * whatever the history, it must count what reading the whole history counts. The reference is the
 * earlier reading: every row, and every machine.created and machine.deleted event up to the range's end.
 */
let fk: { compute_config_id: string; cluster_id: string };
const t = useComputeTestApp(
  {},
  {
    setup: async () => {
      const m = await runningMachine(t);
      fk = await t.h.database.db.selectFrom('machines').select(['compute_config_id', 'cluster_id']).where('id', '=', m.id).executeTakeFirstOrThrow();
    },
  },
);

async function wholeHistory(db: Kysely<DB>, workspaceId: string, until: number): Promise<Interval[]> {
  const events = await db
    .selectFrom('events')
    .select(['resource_id', 'type', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('type', 'in', ['machine.created', 'machine.deleted'])
    .where('created_at', '<=', until)
    .orderBy('id')
    .execute();
  const lives = new Map<string, Interval>();
  for (const m of await db.selectFrom('machines').select(['id', 'created_at', 'updated_at', 'status']).where('workspace_id', '=', workspaceId).where('created_at', '<=', until).execute()) {
    lives.set(m.id, { start: m.created_at, end: m.status === 'failed' || m.status === 'expired' ? m.updated_at : null });
  }
  for (const e of events) {
    const life = lives.get(e.resource_id);
    if (e.type === 'machine.created' && !life) lives.set(e.resource_id, { start: e.created_at, end: null });
    else if (e.type === 'machine.deleted' && life) life.end = e.created_at;
  }
  return [...lives.values()];
}

/** What became of a machine: its row stays (running, failed, expired, or deleting after its deleted event) or it is gone (deleted). */
const fate = fc.constantFrom<'running' | 'failed' | 'expired' | 'deleting' | 'deleted'>('running', 'failed', 'expired', 'deleting', 'deleted');
const machineArb = fc.record({ start: fc.integer({ min: 0, max: 1000 }), length: fc.integer({ min: 0, max: 600 }), fate });

test('the machines gauge over any range counts what the whole history counts', async () => {
  const db = t.h.database.db;
  const ws = t.s.workspaceId;
  let base = Math.floor(t.h.clock.nowMs() / 1000) + 10_000;
  await fc.assert(
    fc.asyncProperty(
      fc.array(machineArb, { minLength: 0, maxLength: 8 }),
      fc.record({ from: fc.integer({ min: -100, max: 1700 }), step: fc.integer({ min: 1, max: 300 }), count: fc.integer({ min: 1, max: 8 }) }),
      async (machines, range) => {
        // Each run's history lies after the last one's, so runs do not see each other's range.
        base += 5000;
        for (const m of machines) {
          const id = newId('mch');
          const start = base + m.start;
          const end = start + m.length;
          const event = (type: string, at: number) => ({
            id: `evt_${ulid(at * 1000)}`,
            workspace_id: ws,
            type,
            actor_kind: 'system',
            actor_id: null,
            credential_id: null,
            resource_type: 'machine',
            resource_id: id,
            request_id: null,
            ip: null,
            user_agent: null,
            created_at: at,
            data: JSON.stringify({ cluster_id: fk.cluster_id }),
          });
          await db.insertInto('events').values(event('machine.created', start)).execute();
          if (m.fate === 'deleted' || m.fate === 'deleting') await db.insertInto('events').values(event('machine.deleted', end)).execute();
          if (m.fate === 'deleted') continue;
          await db
            .insertInto('machines')
            .values({
              id,
              workspace_id: ws,
              ...fk,
              provider: 'hetzner',
              hostname: `p-${id.slice(-8).toLowerCase()}`,
              server_type: 'cx22',
              location: 'fsn1',
              image: 'ubuntu-24.04',
              status: m.fate as MachineStatus,
              provider_server_id: null,
              ipv4: null,
              snapshot_id: null,
              suspension_id: null,
              operation_id: null,
              cleanup: null,
              etag: id,
              created_at: start,
              updated_at: m.fate === 'failed' || m.fate === 'expired' ? end : start,
            })
            .execute();
        }
        const b: Buckets = { from: base + range.from, step: range.step, count: range.count };
        const until = b.from + b.count * b.step;
        const expected = gauge(await wholeHistory(db, ws, until), b);
        const got = gauge(await platformMetricsStore.machineLives(db, ws, b.from, until, undefined), b);
        assert.deepEqual(got, expected, JSON.stringify({ machines, range }));
      },
    ),
    { seed: PROPERTY_SEED, numRuns: 60 },
  );
});
