/**
 * `npx tsx bench/dashboard-revisions.ts`: the cost of one page of GET /v1/dashboards/{id}/revisions
 * for a dashboard with 100,000 revisions against one with 10, on each engine. Keyset paging
 * should make them cost the same; the target is at most 1.3 times.
 *
 * Requests go through the whole app (authentication, validation, the query, drift, the
 * response schema) with `inject`, one at a time, interleaved in rounds so that both sides see
 * the same machine. The revisions are seeded by direct inserts (100,000 PATCHes would take
 * minutes and measure nothing more).
 *   --engine sqlite|postgres|both (both)   --requests N per side and round (400)   --rounds R (5)
 *   --revisions N (100000)
 * PostgreSQL: WSP_BENCH_PG_URL or WSP_TEST_PG_URL (a schema of its own is made and dropped).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { migrate, openDatabase, type Database } from '../src/db/database.js';
import { createAdminService } from '../src/admin/service.js';
import { systemClock } from '../src/shared/clock.js';
import { CursorCodec } from '../src/shared/cursor.js';
import { newId } from '../src/shared/ids.js';
import type { DashboardRevisionsTable } from '../src/dashboards/tables.js';
import type { App } from '../src/http/fastify-types.js';
import { widget } from './lib/fixtures.js';

const { values: opts } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    requests: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '5' },
    revisions: { type: 'string', default: '100000' },
  },
});
const REQUESTS = Number(opts.requests);
const ROUNDS = Number(opts.rounds);
const BIG = Number(opts.revisions);
const SMALL = 10;

interface Side {
  name: string;
  url: string;
}

interface Figures {
  side: string;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
}

async function withDatabase<T>(engine: 'sqlite' | 'postgres', fn: (database: Database, dataDir: string) => Promise<T>): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-bench-dash-'));
  if (engine === 'sqlite') {
    const database = await openDatabase({ dataDir });
    try {
      await migrate(database);
      return await fn(database, dataDir);
    } finally {
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const url = process.env.WSP_BENCH_PG_URL ?? process.env.WSP_TEST_PG_URL;
  if (!url) throw new Error('set WSP_BENCH_PG_URL (or WSP_TEST_PG_URL) to bench PostgreSQL');
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const database = await openDatabase({ databaseUrl: url, dataDir, pgSchema: schema, poolSize: 4 });
  try {
    await migrate(database);
    return await fn(database, dataDir);
  } finally {
    await database.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Appends revisions 2..total to a dashboard made through the API, in batched inserts, and moves its head. */
async function seedRevisions(database: Database, dashboard: { id: string; workspace_id: string; current_revision_id: string }, total: number, authorId: string) {
  const first = await database.db.selectFrom('dashboard_revisions').selectAll().where('id', '=', dashboard.current_revision_id).executeTakeFirstOrThrow();
  const diff = JSON.stringify({
    version: 1,
    dashboard_fields: ['name'],
    widgets: { added: { count: 0, widget_ids: [] }, removed: { count: 0, widget_ids: [] }, changed: { count: 0, widgets: [] } },
  });
  let parent = first.id;
  let batch: DashboardRevisionsTable[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    await database.db.insertInto('dashboard_revisions').values(rows).execute();
  };
  for (let seq = 2; seq <= total; seq++) {
    const id = newId('drev');
    batch.push({
      ...first,
      id,
      seq,
      parent_revision_id: parent,
      name: `Revision ${seq}`,
      summary: null,
      structural_diff: diff,
      source: 'manual',
      author_id: authorId,
      created_at: first.created_at + seq,
    });
    parent = id;
    if (batch.length === 400) await flush();
  }
  await flush();
  await database.db.updateTable('dashboards').set({ current_revision_id: parent }).where('id', '=', dashboard.id).execute();
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function time(app: App, headers: Record<string, string>, url: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const res = await app.inject({ method: 'GET', url, headers });
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  }
  return out;
}

async function benchEngine(engine: 'sqlite' | 'postgres'): Promise<Figures[]> {
  return withDatabase(engine, async (database, dataDir) => {
    const app = await buildApp({ config: { ...loadConfig({}), dataDir }, database, logger: false });
    try {
      const admin = createAdminService(database.db, systemClock);
      const { workspace_id } = await admin.createWorkspace('Bench');
      const { user_id } = await admin.createUser({ name: 'bench' });
      await admin.addMember(workspace_id, user_id, 'owner');
      const { token } = await admin.createApiToken(workspace_id, user_id, 'bench');
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

      const snippet = (await app.inject({ method: 'POST', url: '/v1/snippets', headers, payload: { name: 'Errors', source: 'select 1' } })).json();
      const body = {
        name: 'Revision 1',
        purpose: 'custom',
        filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }],
        default_filter_values: {},
        widgets: [0, 1, 2].map((i) => widget(i, snippet.id, snippet.etag)),
      };
      const make = async () => (await app.inject({ method: 'POST', url: '/v1/dashboards', headers, payload: body })).json();
      const small = await make();
      const big = await make();
      const started = Date.now();
      await seedRevisions(database, small, SMALL, user_id);
      await seedRevisions(database, big, BIG, user_id);
      console.log(`${engine}: seeded ${SMALL} and ${BIG} revisions in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      // Fresh statistics, as autovacuum would gather them on a live database.
      if (engine === 'postgres') await sql`analyze dashboard_revisions`.execute(database.db);

      // A cursor to the middle of the big history, as a client that paged that far holds
      // (signed with the key the app made at start, the same way the app signs it).
      const { value: key } = await database.db.selectFrom('settings').select('value').where('key', '=', 'cursor_hmac_key').executeTakeFirstOrThrow();
      const codec = new CursorCodec(Buffer.from(key, 'base64'));
      const middle = codec.encode(`dashboard_revisions:${workspace_id}:${big.id}`, [Math.floor(BIG / 2)]);
      const sides: Side[] = [
        { name: `${SMALL} revisions, first page`, url: `/v1/dashboards/${small.id}/revisions` },
        { name: `${BIG} revisions, first page`, url: `/v1/dashboards/${big.id}/revisions` },
        { name: `${BIG} revisions, page at revision ${Math.floor(BIG / 2)}`, url: `/v1/dashboards/${big.id}/revisions?cursor=${middle}` },
      ];
      for (const side of sides) await time(app, headers, side.url, 100); // warm-up: JIT, serializers, caches
      const samples = new Map<string, number[]>(sides.map((s) => [s.name, []]));
      for (let r = 0; r < ROUNDS; r++) for (const side of sides) samples.get(side.name)!.push(...(await time(app, headers, side.url, REQUESTS)));
      return sides.map((side) => {
        const ms = samples.get(side.name)!.sort((a, b) => a - b);
        return { side: side.name, meanMs: ms.reduce((a, b) => a + b, 0) / ms.length, p50Ms: percentile(ms, 50), p95Ms: percentile(ms, 95) };
      });
    } finally {
      await app.close();
    }
  });
}

const engines = opts.engine === 'both' ? (['sqlite', 'postgres'] as const) : [opts.engine as 'sqlite' | 'postgres'];
console.log(`| engine | dashboard | mean ms | p50 ms | p95 ms | mean vs ${SMALL} revisions | p50 vs ${SMALL} revisions |`);
console.log('|---|---|---|---|---|---|---|');
for (const engine of engines) {
  const figures = await benchEngine(engine);
  const base = figures[0]!;
  for (const f of figures) {
    const ratios = `${(f.meanMs / base.meanMs).toFixed(2)} | ${(f.p50Ms / base.p50Ms).toFixed(2)}`;
    console.log(`| ${engine} | ${f.side} | ${f.meanMs.toFixed(3)} | ${f.p50Ms.toFixed(3)} | ${f.p95Ms.toFixed(3)} | ${ratios} |`);
  }
}
