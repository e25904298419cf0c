/**
 * What the bench measures. Each scenario seeds what it needs through the real API, then names
 * one request; `floor` names the hand-written route of bench/servers/floor.mjs doing the same
 * SQL (absent where no hand-written equivalent is meaningful, e.g. a git commit).
 */
export interface Credentials {
  workspace_id: string;
  user_id: string;
  session_token: string;
  api_token: string;
}

export interface Request {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path as the project serves it. */
  path: string;
  /** Route pattern for the ceiling and floor servers (Fastify syntax). */
  route: string;
  headers: Record<string, string>;
  body?: string;
  expectStatus: number;
  /** Headers whose value must differ per request (an Idempotency-Key): see LoadSpec. */
  uniqueHeaders?: string[];
  /** Fewer connections than the default (work serialized per resource). */
  connections?: number;
  /**
   * Another request measured through the project alternately with this one, same connections
   * and duration, so the row can say what this one costs next to it (a 304 next to the 200).
   */
  baseline?: { name: string; request: Request; target: string };
  /** Waits, after each measured run, until the server has finished the work the run left (restores' jobs). */
  settle?: () => Promise<void>;
}

export interface Scenario {
  name: string;
  floor: string | null;
  /** Measured through the project only: a reference point for another row, not a comparison. */
  projectOnly?: boolean;
  /**
   * The name of a row giving the project's event-loop delay p99 (ms) during this scenario's
   * measured runs, and a second row of its delay beyond the sampling interval (bench/event-loop.ts).
   */
  eventLoop?: string;
  seed(api: Api, creds: Credentials, db: BenchDb): Promise<Request>;
}

import { createHash } from 'node:crypto';
import type { BenchDb } from './lib/db.js';
import { ulid } from '../src/shared/ids.js';
import { widget } from './lib/fixtures.js';
import { bearer, installRendered, installsSettled, json, must, packageWith, type Api } from './lib/seed.js';

export type { Api } from './lib/seed.js';

/** The body of a secret version write: 1 KiB of data (also the restore storm's writers). */
export const secretVersionBody = JSON.stringify({ data: Buffer.alloc(1024, 7).toString('base64') });

/**
 * 49 API tokens besides the bootstrap one: a full first page of 50. Once per workspace (each
 * engine bootstraps its own), since two scenarios list them (the 200 and the 304) and a
 * second seeding would make it 99 tokens and another answer.
 */
const tokensSeeded = new Map<string, Promise<void>>();
function seedApiTokens(api: Api, c: Credentials): Promise<void> {
  let done = tokensSeeded.get(c.workspace_id);
  if (!done) {
    done = (async () => {
      const session = { ...bearer(c.session_token), 'service-context': c.workspace_id, 'content-type': 'application/json' };
      for (let i = 0; i < 49; i++) await must(api('POST', '/v1/api_tokens', session, { name: `bench-${i}` }), 201);
    })();
    tokensSeeded.set(c.workspace_id, done);
  }
  return done;
}

const apiTokensRead = (c: Credentials): Request => ({ method: 'GET', path: '/v1/api_tokens', route: '/v1/api_tokens', headers: bearer(c.api_token), expectStatus: 200 });

export const scenarios: Scenario[] = [
  {
    name: 'GET /v1/api_tokens (sk_svc_, 50 items)',
    floor: 'api_tokens',
    eventLoop: 'event-loop delay p99 under the api_tokens read load, ms',
    async seed(api, c) {
      await seedApiTokens(api, c);
      return apiTokensRead(c);
    },
  },
  {
    name: 'GET /v1/api_tokens with If-None-Match (304)',
    // The floor makes the same tag from the same version row, and keeps its own 200 as the
    // project's answer cache does: its ratio is the figure the project's is judged against.
    floor: 'api_tokens_conditional',
    async seed(api, c, db) {
      await seedApiTokens(api, c);
      // The answer lists the caller's own token with its last_used_at, which the server writes
      // at most once a minute: a run crossing that minute would (rightly) get 200s with a new
      // ETag, and count them as errors. Pinning it a day ahead stops the touches for the run;
      // the 200 measured alongside (baseline) reads the same rows, so both skip the same write.
      const tokenHash = createHash('sha256').update(c.api_token).digest('hex');
      const pinned = Math.floor(Date.now() / 1000) + 86_400;
      await db.run('update api_tokens set last_used_at = ? where token_hash = ?', [pinned, tokenHash]);
      const [row] = await db.all('select last_used_at from api_tokens where token_hash = ?', [tokenHash]);
      if (Number(row?.last_used_at) !== pinned) throw new Error("seed failed: the API token's last_used_at is not pinned");
      const read = apiTokensRead(c);
      const first = await api('GET', read.path, read.headers);
      const etag = first.headers.get('etag');
      if (first.status !== 200 || !etag) throw new Error(`seed failed: GET ${read.path} ${first.status}, ETag ${etag}`);
      return { ...read, headers: { ...read.headers, 'if-none-match': etag }, expectStatus: 304, baseline: { name: '200', request: read, target: 'target ≥ 2' } };
    },
  },
  {
    name: 'GET /v1/notifications (session, 50 items)',
    floor: 'notifications',
    async seed(_api, c, db) {
      const now = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 60; i++) {
        await db.run(
          'insert into notifications (id, user_id, type, resource_type, resource_id, title, body, severity, context, read_at, created_at, dedupe_key) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [`ntf_${ulid()}`, c.user_id, 'machine_expiry', 'machine', `mch_${ulid()}`, 'Machine expires soon', `Snapshot ${i} expires in 7 days`, 'info', '{"days_left":7}', null, now, null],
        );
      }
      return { method: 'GET', path: '/v1/notifications', route: '/v1/notifications', headers: bearer(c.session_token), expectStatus: 200 };
    },
  },
  revisions(100_000),
  revisions(10),
  {
    name: 'POST /v1/secrets/{id}/versions (1 KiB, encrypt + insert)',
    floor: 'secret_version',
    async seed(api, c) {
      const secret = await must(api('POST', '/v1/secrets', { ...bearer(c.api_token), ...json }, { name: 'bench' }), 201);
      // BENCH_KEYED=1: each request with an Idempotency-Key of its own, as the SDK sends its POSTs
      // (the project's claim and completion statements besides; the floor ignores the header).
      return {
        method: 'POST',
        path: `/v1/secrets/${secret.id}/versions`,
        route: '/v1/secrets/:id/versions',
        headers: { ...bearer(c.api_token), ...json },
        body: secretVersionBody,
        expectStatus: 201,
        ...(process.env.BENCH_KEYED ? { uniqueHeaders: ['idempotency-key'] } : {}),
      };
    },
  },
  {
    // One client restoring in a loop (each restore is a commit on the install's branch, made
    // under the install's lock): req/s is restores a second, the latency of one. Other writers
    // during restores on many installs: the restore storm (bench/install-workloads.ts).
    name: 'POST /v1/installs/{id}:restore (sequential, one install)',
    floor: null,
    projectOnly: true,
    async seed(api, c) {
      const h = { ...bearer(c.api_token), ...json };
      const pkg = await packageWith(api, h, 'bench-pkg', { 'app/config.yaml': 'replicas: {{replicas}}\nname: {{name}}\n', 'README.md': '# {{name}}\n' });
      const inst = await installRendered(api, h, pkg, 'bench', { replicas: 2, name: 'bench' });
      return {
        method: 'POST',
        path: `/v1/installs/${inst.id}:restore`,
        route: '/v1/installs/:id',
        headers: { ...h, 'if-match': '*' },
        body: JSON.stringify({ render_id: inst.renderId }),
        expectStatus: 200,
        uniqueHeaders: ['idempotency-key'],
        connections: 1,
        settle: () => installsSettled(api, h, [inst.id]),
      };
    },
  },
  {
    name: '401 (garbage sk_svc_ token)',
    floor: 'unauthorized',
    async seed() {
      // A well-formed token (valid checksum) that does not exist: the database is asked.
      const garbage = 'sk_svc_' + 'A'.repeat(32);
      const { apiTokenChecksum } = await import('../src/auth/credentials.js');
      const token = garbage + apiTokenChecksum(garbage);
      return { method: 'GET', path: '/v1/api_tokens', route: '/v1/api_tokens', headers: bearer(token), expectStatus: 401 };
    },
  },
];

/** A dashboard with `total` revisions (3 snippet widgets each, so drift is computed), seeded by direct inserts. */
function revisions(total: number): Scenario {
  return {
    name: `GET /v1/dashboards/{id}/revisions (${total.toLocaleString('en')} revisions)`,
    floor: 'revisions',
    projectOnly: total < 1000,
    async seed(api, c, db) {
      const h = { ...bearer(c.api_token), ...json };
      const snippet = await must(api('POST', '/v1/snippets', h, { name: `Errors ${total}`, source: 'select 1' }), 201);
      const body = {
        name: 'Revision 1',
        purpose: 'custom',
        filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }],
        default_filter_values: {},
        widgets: [0, 1, 2].map((i) => widget(i, snippet.id, snippet.etag)),
      };
      const dash = await must(api('POST', '/v1/dashboards', h, body), 201);
      const [first] = await db.all('select * from dashboard_revisions where id = ?', [dash.current_revision_id]);
      const columns = Object.keys(first!);
      const insert = `insert into dashboard_revisions (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`;
      let parent = String(first!.id);
      let batch: { sql: string; params: unknown[] }[] = [];
      for (let seq = 2; seq <= total; seq++) {
        const id = `drev_${ulid()}`;
        const row: Record<string, unknown> = { ...first, id, seq, parent_revision_id: parent, name: `Revision ${seq}`, created_at: Number(first!.created_at) + seq };
        batch.push({ sql: insert, params: columns.map((k) => row[k]) });
        parent = id;
        if (batch.length === 2000) {
          await db.batch(batch);
          batch = [];
        }
      }
      if (batch.length) await db.batch(batch);
      await db.run('update dashboards set current_revision_id = ? where id = ?', [parent, dash.id]);
      // Statistics for the planner, as autovacuum would gather them a minute later: measured right
      // after a bulk insert, PostgreSQL sorted all 100,000 rows per request (3 req/s).
      await db.run('analyze dashboard_revisions', []);
      return { method: 'GET', path: `/v1/dashboards/${dash.id}/revisions`, route: '/v1/dashboards/:id/revisions', headers: bearer(c.api_token), expectStatus: 200 };
    },
  };
}
