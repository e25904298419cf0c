import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import { inTransaction } from '../../db/database.js';
import type { RendersTable } from '../tables.js';
import { bucketed, type Buckets } from '../../events/minute-counts.js';
import { keepPrefixSums, prefixSumsAt, type PrefixSums } from '../../db/prefix-sums.js';

const DAY = 86_400;

/** The keys of render_prefix (migration 0034) a render of `installId` in `state` is counted under; `all` adds those its state does not name. */
function prefixKeys(installId: string, state: string, all: boolean): string[] {
  const keys = [`s:${state}`, `is:${installId}:${state}`];
  return all ? ['*', `i:${installId}`, ...keys] : keys;
}

/** The key of render_prefix that counts a series' filter. */
function prefixKeyOf(f: { install?: string | undefined; status?: string | undefined }): string {
  if (f.install && f.status) return `is:${f.install}:${f.status}`;
  if (f.install) return `i:${f.install}`;
  if (f.status) return `s:${f.status}`;
  return '*';
}

/** The renders series' day sums (migration 0034). */
const RENDER_PREFIX: PrefixSums = { table: 'render_prefix', at: 'created_at', period: DAY };

const keepPrefix = (trx: Kysely<DB>, workspaceId: string, createdAt: number, deltas: { key: string; delta: number }[]) => keepPrefixSums(trx, RENDER_PREFIX, workspaceId, createdAt, deltas);

/** Lookups past this many (a range of years in few points: a lookup for each day's end) count the renders themselves. */
const MAX_LOOKUPS = 4_000;

export const renderStore = {
  /** In a transaction: render_prefix counts the render in the same one. */
  insert: async (db: Kysely<DB>, row: RendersTable) => {
    await db.insertInto('renders').values(row).execute();
    await keepPrefix(
      db,
      row.workspace_id,
      row.created_at,
      prefixKeys(row.install_id, row.state, true).map((key) => ({ key, delta: 1 })),
    );
  },

  /** Keeps an install's values once however many renders use them; the digest names them. */
  keepValues: async (db: Kysely<DB>, installId: string, valuesJson: string): Promise<string> => {
    const digest = createHash('sha256').update(valuesJson).digest('hex');
    await db
      .insertInto('render_values')
      .values({ install_id: installId, digest, values_json: valuesJson })
      .onConflict((oc) => oc.columns(['install_id', 'digest']).doNothing())
      .execute();
    return digest;
  },

  valuesOf: async (db: Kysely<DB>, render: Pick<RendersTable, 'install_id' | 'values_digest'>): Promise<string> =>
    (await db.selectFrom('render_values').select('values_json').where('install_id', '=', render.install_id).where('digest', '=', render.values_digest).executeTakeFirstOrThrow()).values_json,

  /**
   * The workspace's renders made since `since` (restores, which render nothing, not counted),
   * and when the oldest of them was made: the quota frees a place an hour after it.
   */
  madeSince: async (db: Kysely<DB>, workspaceId: string, since: number): Promise<{ count: number; oldest: number | null }> => {
    const row = await db
      .selectFrom('renders')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>=', since)
      .where('restored_from_render_id', 'is', null)
      .executeTakeFirstOrThrow();
    return { count: Number(row.n), oldest: row.oldest === null ? null : Number(row.oldest) };
  },

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('renders').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** For jobs, which act for no caller: the render's own row carries its workspace. */
  byId: (db: Kysely<DB>, id: string) => db.selectFrom('renders').selectAll().where('id', '=', id).executeTakeFirst(),

  /** Newest first: by the install's render number, keyset below `beforeSeq`. */
  pageForInstall: (db: Kysely<DB>, installId: string, limit: number, beforeSeq: number | null) => {
    let q = db.selectFrom('renders').selectAll().where('install_id', '=', installId);
    if (beforeSeq !== null) q = q.where('seq', '<', beforeSeq);
    return q.orderBy('seq', 'desc').limit(limit).execute();
  },

  /** Whether a render of the install is queued or running. */
  underWay: async (db: Kysely<DB>, installId: string): Promise<boolean> =>
    (await db.selectFrom('renders').select('id').where('install_id', '=', installId).where('state', 'in', ['queued', 'running']).limit(1).executeTakeFirst()) !== undefined,

  /** The install's renders queued or running, with their state and operation. */
  unfinished: (db: Kysely<DB>, installId: string) =>
    db.selectFrom('renders').select(['id', 'state', 'operation_id']).where('install_id', '=', installId).where('state', 'in', ['queued', 'running']).orderBy('seq').execute(),

  queued: (db: Kysely<DB>, installId: string) => db.selectFrom('renders').select(['id', 'operation_id']).where('install_id', '=', installId).where('state', '=', 'queued').execute(),

  /**
   * The install's last render that has reached the branch (succeeded, or a restore under way) or
   * a change request (docs/spec-gaps.md, "Repository change requests"): an older render that finishes after it is superseded.
   */
  lastCommitted: (db: Kysely<DB>, installId: string) =>
    db
      .selectFrom('renders')
      .select(['id', 'seq'])
      .where('install_id', '=', installId)
      .where((eb) => eb.or([eb('commit_sha', 'is not', null), eb('change_request_id', 'is not', null)]))
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst(),

  /**
   * Restores whose commit the database records but that are not finished: their commit may not
   * be on `main` yet (src/installs/renders/landing.ts). Oldest first.
   */
  runningRestores: (db: Kysely<DB>, installId: string) =>
    db
      .selectFrom('renders')
      .select(['id', 'seq', 'commit_sha'])
      .where('install_id', '=', installId)
      .where('state', '=', 'running')
      .where('restored_from_render_id', 'is not', null)
      .where('commit_sha', 'is not', null)
      .orderBy('seq', 'asc')
      .execute() as Promise<{ id: string; seq: number; commit_sha: string }[]>,

  /** Moves a render from one state to another only if it is still in `from`: false otherwise. */
  transition: async (
    db: Kysely<DB>,
    id: string,
    from: RendersTable['state'],
    to: Partial<Pick<RendersTable, 'state' | 'message' | 'render_hash' | 'tree_sha' | 'commit_sha' | 'change_request_id'>> & { updated_at: number },
  ): Promise<boolean> => {
    if (to.state === undefined || to.state === from) {
      const res = await db.updateTable('renders').set(to).where('id', '=', id).where('state', '=', from).executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    }
    const state = to.state;
    // The series' `status` is the state a render is in now: its count moves with it, in the same transaction.
    return inTransaction(db, async (trx) => {
      const moved = await trx.updateTable('renders').set(to).where('id', '=', id).where('state', '=', from).returning(['workspace_id', 'install_id', 'created_at']).executeTakeFirst();
      if (!moved) return false;
      await keepPrefix(trx, moved.workspace_id, Number(moved.created_at), [
        ...prefixKeys(moved.install_id, from, false).map((key) => ({ key, delta: -1 })),
        ...prefixKeys(moved.install_id, state, false).map((key) => ({ key, delta: 1 })),
      ]);
      return true;
    });
  },

  /**
   * The workspace's renders created in each bucket (its index `b`, counted `n`), of one install or
   * every one, in any state or the one they are in now: the platform metric `renders`.
   */
  countsByBucket: async (db: Kysely<DB>, workspaceId: string, b: Buckets, f: { install?: string | undefined; status?: string | undefined }): Promise<{ b: number; n: number }[]> => {
    const bounds = Array.from({ length: b.count + 1 }, (_, i) => b.from + i * b.step);
    // Each point (a, z]: within one day P(z) - P(a), P(t) the day's sum up to t; across days the rest of a's day, the whole days between, and z's day up to z.
    const ats: number[] = [];
    const index = new Map<number, number>();
    const ask = (t: number) => {
      let i = index.get(t);
      if (i === undefined) {
        i = ats.push(t) - 1;
        index.set(t, i);
      }
      return i;
    };
    const terms: { point: number; lookup: number; sign: 1 | -1 }[] = [];
    for (let i = 0; i < b.count && ats.length <= MAX_LOOKUPS; i++) {
      const a = bounds[i]!;
      const z = bounds[i + 1]!;
      terms.push({ point: i, lookup: ask(a), sign: -1 });
      for (let d = a - (a % DAY); d < z - (z % DAY); d += DAY) terms.push({ point: i, lookup: ask(d + DAY - 1), sign: 1 });
      terms.push({ point: i, lookup: ask(z), sign: 1 });
    }
    if (b.from < 0 || ats.length > MAX_LOOKUPS) return renderStore.countedByBucket(db, workspaceId, b, f);
    const p = await prefixSumsAt(db, RENDER_PREFIX, workspaceId, prefixKeyOf(f), ats);
    const out = new Array<number>(b.count).fill(0);
    for (const t of terms) out[t.point]! += t.sign * p[t.lookup]!;
    return out.map((n, i) => ({ b: i, n }));
  },

  /** The same from the renders themselves: every render of the range read. */
  countedByBucket: (db: Kysely<DB>, workspaceId: string, b: Buckets, f: { install?: string | undefined; status?: string | undefined }) => {
    let q = db
      .selectFrom('renders')
      .select([bucketed(b).as('b'), sql<number>`count(*)`.as('n')])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>', b.from)
      .where('created_at', '<=', b.from + b.count * b.step);
    if (f.install) q = q.where('install_id', '=', f.install);
    if (f.status) q = q.where('state', '=', f.status as never);
    return q.groupBy('b').execute();
  },
};
