import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/**
 * PostgreSQL whose introspection sees only the connection's own schema.
 *
 * Kysely's Migrator asks the introspector for every table to learn whether its two tables
 * exist. The stock introspector reads every column of every schema and calls
 * `pg_get_serial_sequence('schema.table', column)` for each: a lookup by name in the live
 * catalog, while the rows come from the query's snapshot. Another application (or test) of the
 * same database renaming or dropping one of its tables during that query failed our migration
 * with "relation ... does not exist", at every `wsp serve`, `worker` and `admin` start. Our
 * tables are all in `current_schema()` (a `pgSchema` or a DATABASE_URL's search_path set it), so
 * nothing outside it is read, and tables are joined by oid, never looked up by name.
 */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's DatabaseIntrospector works on any schema, so its API takes Kysely<any>
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

interface ColumnRow {
  table: string;
  table_type: string;
  schema: string;
  column: string;
  not_null: boolean;
  has_default: boolean;
  type: string;
  type_schema: string;
  column_description: string | null;
  auto_incrementing: boolean;
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's DatabaseIntrospector works on any schema, so its API takes Kysely<any>
  readonly #db: Kysely<any>;
  readonly #stock: PostgresIntrospector;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's DatabaseIntrospector works on any schema, so its API takes Kysely<any>
  constructor(db: Kysely<any>) {
    this.#db = db;
    this.#stock = new PostgresIntrospector(db);
  }

  // The Migrator checks here that the schema it was given exists; listing namespaces looks
  // nothing up by name, so the stock query is safe.
  getSchemas(): Promise<SchemaMetadata[]> {
    return this.#stock.getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    // What pg_get_serial_sequence reports (a sequence owned by the column: serial or identity),
    // found through pg_depend by oid instead.
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", c.relkind as table_type, ns.nspname as "schema",
        a.attname as "column", a.attnotnull as not_null, a.atthasdef as has_default,
        typ.typname as "type", dtns.nspname as type_schema,
        col_description(a.attrelid, a.attnum) as column_description,
        exists (
          select 1 from pg_catalog.pg_depend d
          join pg_catalog.pg_class s on s.oid = d.objid and s.relkind = 'S'
          where d.classid = 'pg_catalog.pg_class'::regclass and d.refclassid = 'pg_catalog.pg_class'::regclass
            and d.refobjid = c.oid and d.refobjsubid = a.attnum and d.deptype in ('a', 'i')
        ) as auto_incrementing
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = c.oid
      join pg_catalog.pg_type typ on typ.oid = a.atttypid
      join pg_catalog.pg_namespace dtns on dtns.oid = typ.typnamespace
      where ns.nspname = current_schema()
        and c.relkind in ('r', 'v', 'p')
        and a.attnum > 0 and not a.attisdropped
        ${options.withInternalKyselyTables ? sql`` : sql`and c.relname not in (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE})`}
      order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const r of rows) {
      let table = tables.get(r.table);
      if (!table) {
        table = { name: r.table, schema: r.schema, isView: r.table_type === 'v', columns: [] };
        tables.set(r.table, table);
      }
      table.columns.push({
        name: r.column,
        dataType: r.type,
        dataTypeSchema: r.type_schema,
        isAutoIncrementing: r.auto_incrementing,
        isNullable: !r.not_null,
        hasDefaultValue: r.has_default,
        ...(r.column_description === null ? {} : { comment: r.column_description }),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
