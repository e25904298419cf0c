// The floor of the work: a minimal Fastify route doing the scenario's SQL by hand, with no
// other machinery (no validation, no context, no logging), on the same database.
import { createHash } from 'node:crypto';
import path from 'node:path';
import Fastify from 'fastify';
import Database from 'better-sqlite3';
import pg from 'pg';

const scenario = process.env.BENCH_SCENARIO;
const sha = (s) => createHash('sha256').update(s).digest('hex');
const bearer = (h) => (h ?? '').replace(/^Bearer /, '');
const unauthorized = { success: false, errors: [{ code: 7010, message: 'A valid bearer credential is required' }], result: {} };

let query;
if (process.env.DATABASE_URL) {
  pg.types.setTypeParser(20, Number);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  query = async (sql, params) => {
    let i = 0;
    return (await pool.query(sql.replace(/\?/g, () => `$${++i}`), params)).rows;
  };
} else {
  const db = new Database(path.join(process.env.WSP_DATA_DIR, 'wsp.sqlite'));
  db.pragma('journal_mode = WAL');
  const cache = new Map();
  query = async (sql, params) => {
    let st = cache.get(sql);
    if (!st) cache.set(sql, (st = db.prepare(sql)));
    return st.reader ? st.all(...params) : (st.run(...params), []);
  };
}

const now = () => Math.floor(Date.now() / 1000);
const handlers = {
  async api_tokens(req, reply) {
    const [tok] = await query('select id, workspace_id, expires_at from api_tokens where token_hash = ?', [sha(bearer(req.headers.authorization))]);
    if (!tok || (tok.expires_at !== null && tok.expires_at <= now())) return reply.code(401).send(unauthorized);
    const rows = await query(
      'select id, name, prefix, expires_at, created_at, created_by, last_used_at from api_tokens where workspace_id = ? order by id desc limit 51',
      [tok.workspace_id],
    );
    return { data: rows.slice(0, 50), has_more: rows.length > 50, next_cursor: null };
  },
  async unauthorized(req, reply) {
    const [tok] = await query('select id from api_tokens where token_hash = ?', [sha(bearer(req.headers.authorization))]);
    if (!tok) return reply.code(401).send(unauthorized);
    return {};
  },
};

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.route({ method: process.env.BENCH_METHOD ?? 'GET', url: process.env.BENCH_ROUTE, handler: handlers[scenario] });
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
