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
}

export interface Scenario {
  name: string;
  floor: string | null;
  seed(api: Api, creds: Credentials): Promise<Request>;
}

export type Api = (method: string, path: string, headers: Record<string, string>, body?: unknown) => Promise<{ status: number; json: any }>;

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

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
