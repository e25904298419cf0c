import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

/** Direct SQL on the bench's database, for seeding what the API cannot make (notifications). */
export interface BenchDb {
  run(sql: string, params?: unknown[]): Promise<void>;
  close(): Promise<void>;
}

export function openBenchDb(env: Record<string, string>): BenchDb {
  if (env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
    return {
      async run(sql, params = []) {
        let i = 0;
        await pool.query(sql.replace(/\?/g, () => `$${++i}`), params);
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
    async close() {
      db.close();
    },
  };
}
