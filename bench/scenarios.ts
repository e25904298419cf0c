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
  perRequestHeaders?: () => Record<string, string>;
  /** Fewer connections than the default (work serialized per resource). */
  connections?: number;
}

export interface Scenario {
  name: string;
  floor: string | null;
  /** Measured through the project only: a reference point for another row, not a comparison. */
  projectOnly?: boolean;
  seed(api: Api, creds: Credentials, db: BenchDb): Promise<Request>;
}

import type { BenchDb } from './lib/db.js';
import { ulid } from '../src/shared/ids.js';
import { widget } from './lib/fixtures.js';

export type Api = (method: string, path: string, headers: Record<string, string>, body?: unknown) => Promise<{ status: number; json: any }>;

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const json = { 'content-type': 'application/json' };

async function must(res: Promise<{ status: number; json: any }>, status: number): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`seed failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

export const scenarios: Scenario[] = [
  {
    name: 'GET /v1/api_tokens (sk_svc_, 50 items)',
    floor: 'api_tokens',
    async seed(api, c) {
      const session = { ...bearer(c.session_token), 'service-context': c.workspace_id, 'content-type': 'application/json' };
      for (let i = 0; i < 49; i++) {
        const r = await api('POST', '/v1/api_tokens', session, { name: `bench-${i}` });
        if (r.status !== 201) throw new Error(`seed failed: ${r.status} ${JSON.stringify(r.json)}`);
      }
      return { method: 'GET', path: '/v1/api_tokens', route: '/v1/api_tokens', headers: bearer(c.api_token), expectStatus: 200 };
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
      const body = JSON.stringify({ data: Buffer.alloc(1024, 7).toString('base64') });
      return { method: 'POST', path: `/v1/secrets/${secret.id}/versions`, route: '/v1/secrets/:id/versions', headers: { ...bearer(c.api_token), ...json }, body, expectStatus: 201 };
    },
  },
  {
    name: 'POST /v1/installs/{id}:restore (commits/s, a figure for the record)',
    floor: null,
    async seed(api, c) {
      const h = { ...bearer(c.api_token), ...json };
      const pkg = await must(api('POST', '/v1/packages', h, { name: 'bench-pkg' }), 201);
      const files = { 'app/config.yaml': 'replicas: {{replicas}}\nname: {{name}}\n', 'README.md': '# {{name}}\n' };
      const v1 = await must(api('POST', `/v1/packages/${pkg.id}/versions`, h, { semver: '1.0.0', files }), 201);
      const inst = await must(api('POST', '/v1/installs', h, { name: 'bench', package_id: pkg.id, version_id: v1.id, values: { replicas: 2, name: 'bench' } }), 201);
      let render: any;
      for (let i = 0; i < 200; i++) {
        const renders = await must(api('GET', `/v1/installs/${inst.id}/renders`, h), 200);
        render = renders.data.find((r: any) => r.state === 'succeeded');
        if (render) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      if (!render) throw new Error('the first render did not succeed');
      let n = 0;
      return {
        method: 'POST',
        path: `/v1/installs/${inst.id}:restore`,
        route: '/v1/installs/:id',
        headers: { ...h, 'if-match': '*' },
        body: JSON.stringify({ render_id: render.id }),
        expectStatus: 200,
        perRequestHeaders: () => ({ 'idempotency-key': `bench-${process.pid}-${n++}` }),
        connections: 4,
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
      const body = { name: 'Revision 1', purpose: 'custom', filter_definitions: [{ kind: 'time', key: 'time', label: 'Time' }], default_filter_values: {}, widgets: [0, 1, 2].map((i) => widget(i, snippet.id, snippet.etag)) };
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
      return { method: 'GET', path: `/v1/dashboards/${dash.id}/revisions`, route: '/v1/dashboards/:id/revisions', headers: bearer(c.api_token), expectStatus: 200 };
    },
  };
}
