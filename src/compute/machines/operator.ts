import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { Engine } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import type { JobQueue } from '../../jobs/queue.js';
import { AdminError } from '../../shared/errors.js';
import { canonicalId } from '../../shared/ids.js';
import type { SuspendJob } from '../jobs/kinds.js';
import { machineStore } from './store.js';
import { startSuspend } from './suspend-start.js';

const REASONS: SuspendJob['reason'][] = ['manual', 'downgrade'];

/**
 * `wsp admin machine suspend`: the platform suspends a machine (a plan downgrade), offline
 * against the database. No If-Match (the operator acts on the machine as it is, under its row
 * lock); the job is the one `:suspend` queues, through the same queue and table of kinds, run by
 * any server's or `wsp worker`'s worker, and the suspension lists the reason given.
 */
export async function suspendMachineAsOperator(deps: { db: Kysely<DB>; engine: Engine; clock: Clock; jobs: JobQueue }, rawId: string, reason: string) {
  if (!REASONS.includes(reason as SuspendJob['reason'])) throw new AdminError(`--reason must be one of ${REASONS.join(', ')}, not "${reason}"`);
  const id = canonicalId('mch', rawId);
  const { db, engine } = deps;
  const found = await machineStore.byId(db, id);
  if (!found) throw new AdminError(`unknown machine ${rawId}`);
  const machine = await db.transaction().execute(async (trx) => {
    const row = await machineStore.getLocked(trx, engine, found.workspace_id, id);
    if (!row) throw new AdminError(`unknown machine ${rawId}`);
    if (row.status !== 'running') throw new AdminError(`only a running machine can be suspended; ${id} is ${row.status}`);
    return startSuspend(trx, deps, row, reason as SuspendJob['reason']);
  });
  return { machine_id: machine.id, workspace_id: machine.workspace_id, status: machine.status, operation_id: machine.operation_id, reason };
}
