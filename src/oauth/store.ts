import { sql, type Kysely } from 'kysely';
import { countAttempt, giveBackAttempt, purgeWindows } from '../db/window-counter.js';
import type { DB } from '../db/tables.js';
import type { DeviceAuthorizationsTable } from './tables.js';

const changed = (res: { numUpdatedRows: bigint }) => Number(res.numUpdatedRows) > 0;

export const deviceStore = {
  insert: (db: Kysely<DB>, row: DeviceAuthorizationsTable) => db.insertInto('device_authorizations').values(row).execute(),

  byDeviceCodeHash: (db: Kysely<DB>, hash: string) => db.selectFrom('device_authorizations').selectAll().where('device_code_hash', '=', hash).executeTakeFirst(),

  /** A code that can still be decided on or redeemed. */
  liveByUserCode: (db: Kysely<DB>, userCode: string, now: number) =>
    db.selectFrom('device_authorizations').selectAll().where('user_code', '=', userCode).where('expires_at', '>', now).executeTakeFirst(),

  /** Records a poll if the interval has passed since the last one; false: too soon. */
  markPolled: async (db: Kysely<DB>, id: string, nowMs: number, toleranceMs: number): Promise<boolean> =>
    changed(
      await db
        .updateTable('device_authorizations')
        .set({ last_polled_ms: nowMs })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_polled_ms', 'is', null), eb(sql<number>`last_polled_ms + interval_seconds * 1000 - ${toleranceMs}`, '<=', nowMs)]))
        .executeTakeFirst(),
    ),

  /** RFC 8628 §3.5: slow_down adds 5 seconds for this and every later poll. */
  slowDown: (db: Kysely<DB>, id: string, nowMs: number, addSeconds: number) =>
    db
      .updateTable('device_authorizations')
      .set({ last_polled_ms: nowMs, interval_seconds: sql<number>`interval_seconds + ${addSeconds}` })
      .where('id', '=', id)
      .execute(),

  /** pending -> approved or denied, once: of two racing decisions exactly one wins. */
  decide: async (db: Kysely<DB>, id: string, state: 'approved' | 'denied', userId: string, now: number, approverNotAfter: number | null): Promise<boolean> =>
    changed(
      await db
        .updateTable('device_authorizations')
        .set({ state, user_id: userId, decided_at: now, approver_not_after: approverNotAfter })
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .executeTakeFirst(),
    ),

  /** approved -> redeemed, once: of two racing polls exactly one gets the token. */
  redeem: async (db: Kysely<DB>, id: string): Promise<boolean> =>
    changed(await db.updateTable('device_authorizations').set({ state: 'redeemed' }).where('id', '=', id).where('state', '=', 'approved').executeTakeFirst()),

  purgeExpiredBefore: async (db: Kysely<DB>, before: number): Promise<number> =>
    Number((await db.deleteFrom('device_authorizations').where('expires_at', '<', before).executeTakeFirst()).numDeletedRows),
};

export const guessLimitStore = {
  /** Counts one attempt against `key` (src/db/window-counter.ts). */
  take: (db: Kysely<DB>, key: string, now: number, windowSeconds: number) => countAttempt(db, 'device_guess_limits', key, now, windowSeconds),

  /** An attempt that named a real code was no guess: it does not count. */
  giveBack: (db: Kysely<DB>, key: string) => giveBackAttempt(db, 'device_guess_limits', key),

  purgeWindowsBefore: (db: Kysely<DB>, before: number) => purgeWindows(db, 'device_guess_limits', before),
};
