import { sql, type Kysely } from 'kysely';

/**
 * Issue 54.4 (docs/decisions.md, "The event series: a day's sums from its start"): the event
 * series over 30 days read every counted minute of their range from `event_counts` (220,000
 * rows in bench/growth.ts), 54-107× an empty workspace's time. `event_prefix` holds, for each
 * counted minute with events under a key (src/events/minute-counts.ts, `countKeysOf`: a type, a
 * resource, both among writes), the events under that key from the start of the minute's day to
 * the end of the minute: a point's count within a day is the difference of two rows, found by two
 * searches whatever the traffic.
 *
 * Each workspace's counted span now starts at the start of a day: the minutes counted before
 * the first whole day of a span leave it (they are counted again when a series needs them), and
 * the rest are summed here from `event_counts`.
 */
const DAY = 1440;
const NOT_WRITES_AT_0031 = ['session.created', 'session.failed', 'secret_version.accessed'];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('event_prefix')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('p', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_prefix_pk', ['workspace_id', 'key', 'minute'])
    .execute();
  await sql`update event_count_spans set first_minute = ((first_minute + ${sql.lit(DAY - 1)}) / ${sql.lit(DAY)}) * ${sql.lit(DAY)}`.execute(db);
  await backfillPrefix(db);
}

/** The day sums of every minute counted (only those of each workspace's span: a minute outside it may be stale). */
export async function backfillPrefix(db: Kysely<any>): Promise<void> {
  const writes = sql`c.type not in (${sql.join(NOT_WRITES_AT_0031)})`;
  const keys = [
    { key: sql`'t:' || c.type`, by: sql`c.type`, where: sql`1 = 1` },
    { key: sql`'r:' || c.resource_type`, by: sql`c.resource_type`, where: sql`1 = 1` },
    { key: sql`'w'`, by: sql`c.workspace_id`, where: writes },
    { key: sql`'wr:' || c.resource_type`, by: sql`c.resource_type`, where: writes },
  ];
  for (const k of keys) {
    await sql`insert into event_prefix (workspace_id, key, minute, p)
      select g.workspace_id, g.key, g.minute, sum(g.n) over (partition by g.workspace_id, g.key, g.minute / ${sql.lit(DAY)} order by g.minute)
      from (
        select c.workspace_id as workspace_id, ${k.key} as key, c.minute as minute, sum(c.n) as n
        from event_counts c join event_count_spans s on s.workspace_id = c.workspace_id
        where c.minute >= s.first_minute and c.minute <= s.last_minute and ${k.where}
        group by c.workspace_id, ${k.by}, c.minute
      ) g`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
