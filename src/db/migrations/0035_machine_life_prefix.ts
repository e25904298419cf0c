import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Issue 54.4 (docs/decisions.md, "machines_running: a running sum kept by the machines' status
 * changes"): the platform metric `machines_running` read every `machine.deleted` event of its
 * range and the creations of the machines deleted since, 3-4× an empty workspace's time on
 * SQLite. `machine_life_prefix` holds, for each second at which a key's count of machines alive
 * changed (`*` every machine, `c:<cluster>`, `r:<region>`, `cr:<cluster>:<region>`), that count
 * at the end of the second: a point of the series is one search. The machines' status changes
 * keep it in their own transaction (src/compute/machines/store.ts); this back-fills it from the
 * machines and events already there, each life as the series read it before: from the row's
 * creation (or, for a machine deleted since, its first `machine.created` event) to its first
 * `machine.deleted` event or, failed or expired, its row's last change if that came first.
 */
export function machineLifeBackfill(engine: 'sqlite' | 'postgres'): string {
  const field = (f: string) => (engine === 'postgres' ? `cast(c.data as json) ->> '${f}'` : `json_extract(c.data, '$.${f}')`);
  return `insert into machine_life_prefix (workspace_id, key, at, p)
    with deleted as (
      select workspace_id, resource_id, min(created_at) as at from events where type = 'machine.deleted' group by workspace_id, resource_id
    ), lives as (
      select m.workspace_id, m.cluster_id as cluster, m.location as region, m.created_at as s,
        case
          when m.status in ('failed', 'expired') then case when d.at is not null and d.at < m.updated_at then d.at else m.updated_at end
          when m.status = 'deleting' then coalesce(d.at, m.updated_at)
        end as e
      from machines m left join deleted d on d.workspace_id = m.workspace_id and d.resource_id = m.id
      union all
      select d.workspace_id, ${field('cluster_id')}, ${field('location')}, c.created_at, d.at
      from deleted d join events c on c.workspace_id = d.workspace_id and c.type = 'machine.created' and c.resource_id = d.resource_id
      where not exists (select 1 from machines m where m.id = d.resource_id)
        and c.id = (select min(c2.id) from events c2 where c2.workspace_id = d.workspace_id and c2.type = 'machine.created' and c2.resource_id = d.resource_id)
    ), deltas as (
      select workspace_id, cluster, region, s as at, 1 as d from lives where e is null or e > s
      union all
      select workspace_id, cluster, region, e, -1 from lives where e > s
    ), keyed as (
      select workspace_id, '*' as key, at, d from deltas
      union all select workspace_id, 'c:' || cluster, at, d from deltas where cluster is not null
      union all select workspace_id, 'r:' || region, at, d from deltas where region is not null
      union all select workspace_id, 'cr:' || cluster || ':' || region, at, d from deltas where cluster is not null and region is not null
    ), seconds as (
      select workspace_id, key, at, sum(d) as n from keyed group by workspace_id, key, at
    )
    select workspace_id, key, at, sum(n) over (partition by workspace_id, key order by at) from seconds`;
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('machine_life_prefix')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('p', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('machine_life_prefix_pk', ['workspace_id', 'key', 'at'])
    .execute();
  await sql.raw(machineLifeBackfill(db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite')).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
