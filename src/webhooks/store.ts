import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { prepared } from '../db/prepared.js';
import type { DB } from '../db/tables.js';
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhooksTable } from './tables.js';
import { forUpdate, type Engine } from '../db/database.js';

export const webhookStore = {
  insert: (db: Kysely<DB>, row: WebhooksTable) => db.insertInto('webhooks').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  getLocked: (db: Kysely<DB>, engine: Engine, workspaceId: string, id: string) =>
    forUpdate(engine, db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst(),

  page: (db: Kysely<DB>, workspaceId: string, take: number, beforeId: string | null) => {
    let q = db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(take).execute();
  },

  count: async (db: Kysely<DB>, workspaceId: string): Promise<number> =>
    Number(
      (
        await db
          .selectFrom('webhooks')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('workspace_id', '=', workspaceId)
          .executeTakeFirstOrThrow()
      ).n,
    ),

  /** The enabled endpoints of a workspace and what they subscribe to: read for every event. */
  /** Every event of a workspace reads this in its transaction: compiled once (prepared.ts). */
  enabledOf: prepared((db, workspaceId: string) => db.selectFrom('webhooks').select(['id', 'event_types']).where('workspace_id', '=', workspaceId).where('state', '=', 'enabled')).all,

  update: (db: Kysely<DB>, id: string, patch: Partial<WebhooksTable>) => db.updateTable('webhooks').set(patch).where('id', '=', id).execute(),

  delete: (db: Kysely<DB>, id: string) => db.deleteFrom('webhooks').where('id', '=', id).execute(),

  /**
   * Inserts a delivery unless the endpoint already has one for the event (true when inserted), or
   * unless the endpoint was deleted since the event's writer read it (false): on PostgreSQL a
   * DELETE committed between the read of the enabled endpoints and this insert fails the foreign
   * key, which would abort the write's whole transaction (a 500 for the write, found by the soak);
   * the insert runs in a savepoint so only the delivery is given up. SQLite's writers are one at a
   * time, and a failed statement there leaves its transaction usable.
   */
  insertDelivery: async (db: Kysely<DB>, row: WebhookDeliveriesTable): Promise<boolean> => {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    if (postgres) await sql`savepoint wsp_delivery`.execute(db);
    try {
      const res = await db
        .insertInto('webhook_deliveries')
        .values(row)
        .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
        .executeTakeFirst();
      if (postgres) await sql`release savepoint wsp_delivery`.execute(db);
      return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code !== '23503' && code !== 'SQLITE_CONSTRAINT_FOREIGNKEY') throw err;
      if (postgres) await sql`rollback to savepoint wsp_delivery`.execute(db);
      return false;
    }
  },

  delivery: (db: Kysely<DB>, workspaceId: string, webhookId: string, id: string) =>
    db.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', workspaceId).where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst(),

  /** A delivery with its endpoint, for the job that sends it. */
  deliveryWithEndpoint: (db: Kysely<DB>, id: string) =>
    db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select([
        'd.id',
        'd.workspace_id',
        'd.webhook_id',
        'd.event_id',
        'd.body',
        'd.state',
        'd.attempts',
        'w.url',
        'w.state as webhook_state',
        'w.secret_sealed',
        'w.secret_key_id',
        'w.failing_since',
        'w.circuit_failures',
        'w.circuit_open_until',
      ])
      .where('d.id', '=', id)
      .executeTakeFirst(),

  deliveries: (db: Kysely<DB>, workspaceId: string, webhookId: string, take: number, beforeId: string | null) => {
    let q = db.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', workspaceId).where('webhook_id', '=', webhookId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(take).execute();
  },

  /** Records an attempt's outcome if no other attempt was recorded since `attempts` was read. */
  recordAttempt: async (db: Kysely<DB>, id: string, attempts: number, patch: Partial<WebhookDeliveriesTable>): Promise<boolean> => {
    const res = await db
      .updateTable('webhook_deliveries')
      .set({ ...patch, attempts: attempts + 1 })
      .where('id', '=', id)
      .where('attempts', '=', attempts)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /**
   * Takes the probe of a half-open circuit: moves its end from `seen` to `until`, so the other
   * deliveries of the endpoint keep waiting; false when another delivery took it first.
   */
  takeProbe: async (db: Kysely<DB>, webhookId: string, seen: number, until: number, etag: string): Promise<boolean> => {
    const res = await db.updateTable('webhooks').set({ circuit_open_until: until, etag }).where('id', '=', webhookId).where('circuit_open_until', '=', seen).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** A delivery waiting for its endpoint's circuit: its next attempt is then, and it is not made yet. */
  deferDelivery: (db: Kysely<DB>, id: string, attempts: number, until: number, now: number) =>
    db.updateTable('webhook_deliveries').set({ next_attempt_at: until, updated_at: now }).where('id', '=', id).where('attempts', '=', attempts).where('state', '=', 'pending').execute(),

  updateDelivery: (db: Kysely<DB>, id: string, patch: Partial<WebhookDeliveriesTable>) => db.updateTable('webhook_deliveries').set(patch).where('id', '=', id).execute(),

  /** When an endpoint is disabled: what was waiting for it fails (a retry by hand sends it again). */
  failPending: (db: Kysely<DB>, webhookId: string, reason: string, now: number) =>
    db
      .updateTable('webhook_deliveries')
      .set({ state: 'failed', next_attempt_at: null, last_error: reason, updated_at: now })
      .where('webhook_id', '=', webhookId)
      .where('state', '=', 'pending')
      .execute(),

  /**
   * Records one HTTP attempt of a delivery, numbered after the last one recorded: the caller holds
   * the endpoint's row lock (src/webhooks/delivery-job.ts), so two senders of one delivery number
   * theirs one after the other. Keeps the newest `keep` of the delivery's attempts.
   */
  insertAttempt: async (db: Kysely<DB>, row: Omit<WebhookDeliveryAttemptsTable, 'number'>, keep: number): Promise<number> => {
    const last = await db
      .selectFrom('webhook_delivery_attempts')
      .select((eb) => eb.fn.max('number').as('n'))
      .where('delivery_id', '=', row.delivery_id)
      .executeTakeFirst();
    const number = Number(last?.n ?? 0) + 1;
    await db
      .insertInto('webhook_delivery_attempts')
      .values({ ...row, number })
      .execute();
    if (number > keep)
      await db
        .deleteFrom('webhook_delivery_attempts')
        .where('delivery_id', '=', row.delivery_id)
        .where('number', '<=', number - keep)
        .execute();
    return number;
  },

  /** A page of a delivery's attempts, oldest first, after the attempt numbered `afterNumber`. */
  attempts: (db: Kysely<DB>, deliveryId: string, take: number, afterNumber: number | null) => {
    let q = db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', '=', deliveryId);
    if (afterNumber !== null) q = q.where('number', '>', afterNumber);
    return q.orderBy('number', 'asc').limit(take).execute();
  },
};
