// The ceiling: a minimal Fastify app answering the same JSON bytes from memory.
import fs from 'node:fs';
import Fastify from 'fastify';

const body = fs.readFileSync(process.env.BENCH_BODY_FILE, 'utf8');
const status = Number(process.env.BENCH_STATUS ?? 200);
const method = process.env.BENCH_METHOD ?? 'GET';
const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.route({
  method,
  url: process.env.BENCH_ROUTE,
  handler: async (_req, reply) => reply.code(status).header('content-type', 'application/json; charset=utf-8').send(body),
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
