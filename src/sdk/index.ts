/**
 * A typed client of the Workspace Platform API, generated from the server's own OpenAPI
 * document (`npm run sdk` writes ./schema.ts). Import as `workspace-platform/sdk`:
 *
 *   const api = createClient({ baseUrl: 'https://wsp.example.com', token, workspace: 'ws_...' });
 *   const { data, error } = await api.GET('/v1/api_tokens', { params: { query: { limit: 10 } } });
 *
 * Every call answers `{ data, error, response }`: `error` is the spec's envelope (or, on the
 * two OAuth endpoints, an RFC 6749 error) and `data` the typed success body.
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths } from './schema.js';
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type WspClient = Client<paths>;

export interface ClientOptions {
  /** The server's root URL, e.g. `http://localhost:8080`; a trailing `/v1` is taken off (paths carry it). */
  baseUrl: string;
  /** A session token, a workspace API token (`sk_svc_...`) or an OAuth2 JWT. */
  token?: string | undefined;
  /** Sent as `Service-Context`: the workspace a broad credential acts in (`ws_...`). */
  workspace?: string | undefined;
  /** Headers added to every request (a User-Agent, say). */
  headers?: Record<string, string>;
  /** A fetch to use instead of the global one (tests, proxies, retries). */
  fetch?: (input: Request) => Promise<Response>;
}

export function createClient(opts: ClientOptions): WspClient {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.workspace) headers['service-context'] = opts.workspace;
  return createFetchClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''),
    headers,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
