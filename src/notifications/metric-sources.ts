/**
 * What the platform metrics (src/platform-metrics) read of the notifications area: its rows,
 * read by its own store, so another area names none of its tables.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { notificationStore } from './store.js';

/** The user's notifications unread at some time in (from, until]: [arrival, reading), end null while unread. */
export const unreadSpans = (db: Kysely<DB>, userId: string, from: number, until: number) => notificationStore.unreadSpans(db, userId, from, until);
