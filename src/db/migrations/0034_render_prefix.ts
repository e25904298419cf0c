import { sql, type Kysely } from 'kysely';

/**
 * Issue 54.4 (docs/decisions.md, "The renders series: day sums kept by the renders' writes"): the
 * platform metric `renders` over 30 days grouped every render of the range (2·10^4 in
 * bench/growth.ts), 4-9× an empty workspace's time. `render_prefix` holds, for each second at
 * which a render was created under a key (`*` every render, `i:<install>`, `s:<state>`,
 * `is:<install>:<state>`, the state being the one the render is in now), the renders under that
 * key from the start of that second's day (UTC) to the end of the second: a point's count within
 * a day is the difference of two rows, found by two searches whatever the renders. The renders'
 * writes keep it in their own transaction (src/installs/renders/store.ts); this back-fills it
 * from the renders already made.
 */
const DAY = 86_400;

/** The keys a render is counted under, as SQL over a `renders` row (the same as `renderPrefixKeys` of the store). */
const KEYS = [
  { key: `'*'`, by: 'workspace_id' },
  { key: `'i:' || install_id`, by: 'install_id' },
  { key: `'s:' || state`, by: 'state' },
  { key: `'is:' || install_id || ':' || state`, by: 'install_id, state' },
];

/** The statements that fill `render_prefix` from `renders` (empty before): also what bench/growth.ts runs after writing its renders in bulk. */
export const RENDER_PREFIX_BACKFILL: readonly string[] = KEYS.map(
  (k) => `insert into render_prefix (workspace_id, key, created_at, p)
    select g.workspace_id, g.key, g.created_at, sum(g.n) over (partition by g.workspace_id, g.key, g.created_at / ${DAY} order by g.created_at)
    from (
      select workspace_id, ${k.key} as key, created_at, count(*) as n
      from renders
      group by workspace_id, ${k.by}, created_at
    ) g`,
);

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('render_prefix')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('p', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('render_prefix_pk', ['workspace_id', 'key', 'created_at'])
    .execute();
  for (const s of RENDER_PREFIX_BACKFILL) await sql.raw(s).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
