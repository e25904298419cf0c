import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { RendersTable } from '../tables.js';
import { bucketed, type Buckets } from '../../events/minute-counts.js';

export const renderStore = {
  insert: (db: Kysely<DB>, row: RendersTable) => db.insertInto('renders').values(row).execute(),

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
    const res = await db.updateTable('renders').set(to).where('id', '=', id).where('state', '=', from).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /**
   * The workspace's renders created in each bucket (its index `b`, counted `n`), of one install or
   * every one, in any state or the one they are in now: the platform metric `renders`.
   */
  countsByBucket: (db: Kysely<DB>, workspaceId: string, b: Buckets, f: { install?: string | undefined; status?: string | undefined }) => {
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
