import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

/** Direct SQL on the bench's database, for seeding what the API cannot make (notifications). */
export interface BenchDb {
  run(sql: string, params?: unknown[]): Promise<void>;
  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Runs many statements in one transaction (seeding 100,000 rows). */
  batch(statements: { sql: string; params: unknown[] }[]): Promise<void>;
  close(): Promise<void>;
}

export function openBenchDb(env: Record<string, string>): BenchDb {
  if (env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
    const numbered = (sql: string) => {
      let i = 0;
      return sql.replace(/\?/g, () => `$${++i}`);
    };
    return {
      async run(sql, params = []) {
        await pool.query(numbered(sql), params);
      },
      async all(sql, params = []) {
        return (await pool.query(numbered(sql), params)).rows;
      },
      async batch(statements) {
        const client = await pool.connect();
        try {
          await client.query('begin');
          for (const st of statements) await client.query(numbered(st.sql), st.params);
          await client.query('commit');
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    };
  }
  const db = new Database(path.join(env.WSP_DATA_DIR!, 'wsp.sqlite'));
  db.pragma('busy_timeout = 5000');
  return {
    async run(sql, params = []) {
      db.prepare(sql).run(...params);
    },
    async all(sql, params = []) {
      return db.prepare(sql).all(...params) as Record<string, unknown>[];
    },
    async batch(statements) {
      db.transaction(() => {
        for (const st of statements) db.prepare(st.sql).run(...st.params);
      })();
    },
    async close() {
      db.close();
    },
  };
}
