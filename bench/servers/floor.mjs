// The floor of the work: a minimal Fastify route doing the scenario's SQL by hand, with no
// other machinery (no validation, no context, no logging), on the same database.
import { createHash, randomBytes } from 'node:crypto';
import { open, seal, dataKeyAad, payloadAad } from '../../dist/secrets/crypto.js';
import path from 'node:path';
import Fastify from 'fastify';
import Database from 'better-sqlite3';
import pg from 'pg';

const scenario = process.env.BENCH_SCENARIO;
const sha = (s) => createHash('sha256').update(s).digest('hex');
const bearer = (h) => (h ?? '').replace(/^Bearer /, '');
const unauthorized = { success: false, errors: [{ code: 7010, message: 'A valid bearer credential is required' }], result: {} };

let query;
/** Runs `fn(query)` in one transaction on one connection. */
let transaction;
if (process.env.DATABASE_URL) {
  pg.types.setTypeParser(20, Number);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const on = (client) => async (sql, params) => {
    let i = 0;
    return (await client.query(sql.replace(/\?/g, () => `$${++i}`), params)).rows;
  };
  query = on(pool);
  transaction = async (fn) => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const out = await fn(on(client));
      await client.query('commit');
      return out;
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
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
  // One connection: a transaction's statements must not interleave with another's (Kysely's
  // SQLite driver holds its connection the same way), and it begins immediate, as the server's do.
  let last = Promise.resolve();
  transaction = (fn) => {
    const run = last.then(async () => {
      db.exec('begin immediate');
      try {
        const out = await fn(query);
        db.exec('commit');
        return out;
      } catch (err) {
        db.exec('rollback');
        throw err;
      }
    });
    last = run.catch(() => undefined);
    return run;
  };
}

const now = () => Math.floor(Date.now() / 1000);
const masterKey = Buffer.from(process.env.WSP_MASTER_KEY ?? '', 'base64');
const etag = () => randomBytes(12).toString('base64url');
let seq = 0;
const newId = (p) => `${p}_${Date.now().toString(36)}${(seq++).toString(36)}${randomBytes(6).toString('hex')}`;
const sessionUser = async (req) => {
  const [s] = await query('select id, user_id, expires_at from sessions where token_hash = ?', [sha(bearer(req.headers.authorization))]);
  return s && s.expires_at > now() ? s.user_id : null;
};
const tokenWorkspace = async (req) => {
  const [t] = await query('select id, workspace_id, expires_at from api_tokens where token_hash = ?', [sha(bearer(req.headers.authorization))]);
  return t && (t.expires_at === null || t.expires_at > now()) ? t.workspace_id : null;
};
const pages = new Map();
const apiTokensPage = async (ws) => {
  const rows = await query('select id, name, prefix, expires_at, created_at, created_by, last_used_at from api_tokens where workspace_id = ? order by id desc limit 51', [ws]);
  return { data: rows.slice(0, 50), has_more: rows.length > 50, next_cursor: null };
};
const handlers = {
  async api_tokens(req, reply) {
    const ws = await tokenWorkspace(req);
    if (!ws) return reply.code(401).send(unauthorized);
    return apiTokensPage(ws);
  },
  // The conditional read as the project makes it (src/http/list-versions.ts): the credential, the
  // list's version, its tag; a 304 when If-None-Match names it, else the page this process kept
  // at that tag (the project's answer cache), else the page read and kept.
  async api_tokens_conditional(req, reply) {
    const ws = await tokenWorkspace(req);
    if (!ws) return reply.code(401).send(unauthorized);
    const list = `api_tokens:${ws}`;
    const [row] = await query('select list, version from list_versions where list in (?)', [list]);
    const tag = `W/"${createHash('sha256').update(`${list}\0${row ? Number(row.version) : 0}\0${req.url}`).digest('base64url').slice(0, 27)}"`;
    reply.header('etag', tag);
    if (req.headers['if-none-match'] === tag) return reply.code(304).send();
    let page = pages.get(tag);
    if (page === undefined) pages.set(tag, (page = JSON.stringify(await apiTokensPage(ws))));
    return reply.header('content-type', 'application/json; charset=utf-8').send(page);
  },
  async notifications(req, reply) {
    const user = await sessionUser(req);
    if (!user) return reply.code(401).send(unauthorized);
    const rows = await query(
      'select id, type, resource_type, resource_id, title, body, severity, context, read_at, created_at from notifications where user_id = ? order by id desc limit 51',
      [user],
    );
    for (const r of rows) r.context = JSON.parse(r.context);
    return { data: rows.slice(0, 50), has_more: rows.length > 50, next_cursor: null };
  },
  // The statements the server runs for this request (issue 21, target 3: "the floor doing the same
  // statements by hand"): the token, then one transaction with the secret's counter, the version,
  // its event and the workspace's webhook subscriptions (src/events/record.ts).
  async secret_version(req, reply) {
    const [tok] = await query('select id, workspace_id, expires_at, last_used_at, scopes from api_tokens where token_hash = ?', [sha(bearer(req.headers.authorization))]);
    if (!tok || (tok.expires_at !== null && tok.expires_at <= now())) return reply.code(401).send(unauthorized);
    const ws = tok.workspace_id;
    const plaintext = Buffer.from(req.body.data, 'base64');
    const t = now();
    const version = await transaction(async (q) => {
      const [secret] = await q(
        'update secrets set version_seq = version_seq + ?, etag = ?, updated_at = ? where workspace_id = ? and id = ? returning id, version_seq, key_id, wrapped_key',
        [1, etag(), t, ws, req.params.id],
      );
      const dek = open(masterKey, secret.wrapped_key, dataKeyAad(secret.id));
      const id = newId('secv');
      const v = { id, secret_id: secret.id, version_number: secret.version_seq, state: 'enabled', created_at: t, etag: etag() };
      await q(
        'insert into secret_versions (id, workspace_id, secret_id, version_number, state, comment, etag, ciphertext, created_at, destroyed_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [id, ws, secret.id, secret.version_seq, 'enabled', null, v.etag, seal(dek, plaintext, payloadAad(id)), t, null],
      );
      await q(
        'insert into events (id, workspace_id, type, actor_kind, actor_id, credential_id, resource_type, resource_id, request_id, ip, user_agent, created_at, data) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [newId('evt'), ws, 'secret_version.created', 'api_token', tok.id, tok.id, 'secret_version', id, req.id, req.ip, req.headers['user-agent'] ?? null, t, JSON.stringify({ secret_id: secret.id, version_number: secret.version_seq })],
      );
      await q('select id, event_types from webhooks where workspace_id = ? and state = ?', [ws, 'active']);
      return v;
    });
    return reply.code(201).send(version);
  },
  async revisions(req, reply) {
    const ws = await tokenWorkspace(req);
    if (!ws) return reply.code(401).send(unauthorized);
    const [dash] = await query('select id from dashboards where workspace_id = ? and id = ?', [ws, req.params.id]);
    if (!dash) return reply.code(404).send({ success: false, errors: [{ code: 7002, message: 'not found' }], result: {} });
    const rows = await query('select * from dashboard_revisions where dashboard_id = ? and workspace_id = ? order by seq desc limit 11', [dash.id, ws]);
    const page = rows.slice(0, 10).map((r) => ({ ...r, filter_definitions: JSON.parse(r.filter_definitions), default_filter_values: JSON.parse(r.default_filter_values), widgets: JSON.parse(r.widgets), structural_diff: r.structural_diff ? JSON.parse(r.structural_diff) : null }));
    const ids = [...new Set(page.flatMap((r) => r.widgets.filter((w) => w.widget_type === 'snippet').map((w) => w.snippet_id)))];
    const snippets = ids.length ? await query(`select id, etag, state from snippets where workspace_id = ? and id in (${ids.map(() => '?').join(',')})`, [ws, ...ids]) : [];
    const byId = new Map(snippets.map((x) => [x.id, x]));
    for (const r of page) {
      delete r.seq;
      r.snippet_etag_drift = r.widgets
        .filter((w) => w.widget_type === 'snippet')
        .flatMap((w) => {
          const sn = byId.get(w.snippet_id);
          if (sn && sn.state === 'active' && sn.etag === w.snippet_etag) return [];
          return [{ widget_id: w.widget_id, snippet_id: w.snippet_id, snapshot_etag: w.snippet_etag, current_etag: sn?.etag ?? null, current_state: sn ? sn.state : 'missing', restore_action: !sn ? 'blocked' : sn.state === 'archived' ? 'reactivate' : 'none' }];
        });
    }
    return { data: page, has_more: rows.length > 10, next_cursor: rows.length > 10 ? 'x' : null };
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
