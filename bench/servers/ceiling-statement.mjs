// The ceiling plus the read's one statement: a minimal Fastify route that, like the project, looks
// the request's credential up (its token's SHA-256) with the versions of the lists the answer is
// made of, the lookups of one turn of the event loop in one statement, prepared by name, and then
// answers the same JSON bytes from memory. No validation, context, logging or answer cache: the
// physical reference of a cached authenticated read on PostgreSQL (docs/benchmarks.md).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';

const body = fs.readFileSync(process.env.BENCH_BODY_FILE, 'utf8');
const scenario = process.env.BENCH_SCENARIO;
pg.types.setTypeParser(20, Number);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

// The project's statement for each read (src/db/credential-rows.ts), the lists' parts first.
const lists = {
  api_tokens: { table: 'api_tokens', columns: '"id", "workspace_id", "expires_at", "last_used_at", "scopes"', owner: 'workspace_id', parts: () => [['api_tokens:', '']] },
  notifications: { table: 'sessions', columns: '"id", "user_id", "created_at", "last_used_at", "expires_at", "not_after", "csrf_token"', owner: 'user_id', parts: () => [['notifications:', '']] },
  revisions: {
    table: 'api_tokens',
    columns: '"id", "workspace_id", "expires_at", "last_used_at", "scopes"',
    owner: 'workspace_id',
    parts: (req) => [
      ['dashboard_revisions:', `:${req.params.id}`],
      ['snippets:', ''],
    ],
  },
}[scenario];
if (!lists) throw new Error(`ceiling-statement: no statement for scenario ${scenario}`);

function statementText(hashes, partCount) {
  let n = 0;
  const versions = Array.from({ length: partCount }, (_, i) => `(select version from list_versions where list = $${++n} || "${lists.table}"."${lists.owner}" || $${++n}) as "list_version${i ? `_${i}` : ''}"`);
  const ins = Array.from({ length: hashes }, () => `$${++n}`).join(', ');
  return `select ${lists.columns}, "token_hash" as "token_hash", ${versions.join(', ')} from "${lists.table}" where "token_hash" in (${ins})`;
}

// The batch of this turn: one statement with the lists of its first request, as every request of
// a bench run names the same lists (the project keeps a batch per set of lists).
let batch = null;
function lookUp(hash, parts) {
  if (!batch) {
    const b = (batch = { hashes: new Map(), parts });
    setImmediate(async () => {
      batch = null;
      const hashes = [...b.hashes.keys()];
      const text = statementText(hashes.length, b.parts.length);
      try {
        const { rows } = await pool.query({ name: `c${hashes.length}_${b.parts.length}`, text, values: [...b.parts.flat(), ...hashes] });
        const found = new Map(rows.map((r) => [r.token_hash, r]));
        for (const [h, waiting] of b.hashes) for (const w of waiting) w.resolve(found.get(h));
      } catch (err) {
        for (const waiting of b.hashes.values()) for (const w of waiting) w.reject(err);
      }
    });
  }
  return new Promise((resolve, reject) => {
    const waiting = batch.hashes.get(hash) ?? [];
    waiting.push({ resolve, reject });
    batch.hashes.set(hash, waiting);
  });
}

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.route({
  method: 'GET',
  url: process.env.BENCH_ROUTE,
  handler: async (req, reply) => {
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const row = await lookUp(createHash('sha256').update(token).digest('hex'), lists.parts(req));
    if (!row) return reply.code(401).send({ success: false });
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(body);
  },
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
