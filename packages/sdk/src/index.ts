/**
 * A typed client of the Workspace Platform API, generated from the server's own OpenAPI
 * document (openapi.json; src/schema.ts is openapi-typescript's output of it).
 *
 *   const wsp = createClient({ baseUrl: 'https://wsp.example.com', token, workspace: 'ws_...' });
 *   const { data, error } = await wsp.GET('/v1/dashboards', { params: { query: { limit: 10 } } });
 *   for await (const secret of wsp.paginate('/v1/secrets')) console.log(secret.name);
 *
 * Every call answers `{ data, error, response }` (`error` is the typed envelope); `unwrap`
 * turns that into the data or a thrown `WspError`. See README.md.
 */
import createFetchClient, { type Client, type ClientPathsWithMethod, type MethodResponse } from 'openapi-fetch';
import type { components, paths } from './schema.js';
import { transport, type TransportOptions } from './transport.js';
import { paginate, type ItemOf, type ListPath, type PaginateInit } from './paging.js';
import { waitForOperation, type Operation, type OperationRef, type WaitOptions } from './operations.js';

export type { components, operations, paths } from './schema.js';
export { unwrap, WspError, type Answer, type ErrorEntry, type ErrorEnvelope } from './errors.js';
export { OperationFailedError, type Operation, type OperationRef, type WaitOptions } from './operations.js';
export type { ItemOf, ListPath, Page, PaginateInit } from './paging.js';
export { transport, type TransportOptions } from './transport.js';

/** Every named schema of the document: `Schemas['Dashboard']`. */
export type Schemas = components['schemas'];
export type Dashboard = Schemas['Dashboard'];
export type DashboardRevision = Schemas['DashboardRevision'];
export type Widget = Schemas['Widget'];
export type Snippet = Schemas['Snippet'];
export type Secret = Schemas['Secret'];
export type SecretVersion = Schemas['SecretVersion'];
export type Package = Schemas['Package'];
export type PackageVersion = Schemas['PackageVersion'];
export type Install = Schemas['Install'];
export type Render = Schemas['Render'];
export type ComputeConfig = Schemas['ComputeConfig'];
export type Machine = Schemas['Machine'];
export type Suspension = Schemas['Suspension'];
export type Notification = Schemas['Notification'];
export type Workspace = Schemas['Workspace'];
export type Member = Schemas['Member'];
export type Invitation = Schemas['Invitation'];
export type ApiToken = Schemas['ListedToken'];
export type Webhook = Schemas['Webhook'];
export type WebhookDelivery = Schemas['Delivery'];
export type AuditEvent = Schemas['AuditEvent'];

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/**
 * What a call answers when it succeeds, by its path and method (GET when left out):
 * `DataOf<'/v1/me'>`, `DataOf<'/v1/dashboards', 'post'>`. For the answers the document gives
 * no name of their own; a named one is also `Schemas['Name']`.
 */
export type DataOf<P extends ClientPathsWithMethod<Client<paths>, M>, M extends Method = 'get'> = MethodResponse<Client<paths>, M, P>;

export interface ClientOptions extends TransportOptions {
  /** The server's URL, e.g. `https://wsp.example.com`, with or without `/v1` at the end. */
  baseUrl: string;
  /** A workspace API token (`sk_svc_...`), a session token or an OAuth2 access token. */
  token?: string | undefined;
  /** Sent as `Service-Context`: the workspace a user's credential acts in (`ws_...`). */
  workspace?: string | undefined;
  /** Headers added to every request (a User-Agent, say). */
  headers?: Record<string, string>;
}

export interface WspClient extends Client<paths> {
  /** Every item of a list operation, page after page: `for await (const d of wsp.paginate('/v1/dashboards'))`. */
  paginate<P extends ListPath>(path: P, init?: PaginateInit<P>): AsyncGenerator<ItemOf<P>, void, undefined>;
  /** Polls an operation (its id or a 202 answer) until it is done; throws if it failed. */
  waitForOperation(ref: OperationRef, opts?: WaitOptions): Promise<Operation>;
}

export function createClient(opts: ClientOptions): WspClient {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.workspace) headers['service-context'] = opts.workspace;
  const client = createFetchClient<paths>({
    // Paths carry /v1 themselves, so a base URL given with it is taken back to the server's root.
    baseUrl: opts.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''),
    headers,
    fetch: transport(opts),
  });
  const get = client.GET.bind(client) as never;
  return Object.assign(client, {
    paginate: <P extends ListPath>(path: P, init?: PaginateInit<P>) => paginate(get, path, init),
    waitForOperation: (ref: OperationRef, wait?: WaitOptions) => waitForOperation(get, ref, wait),
  });
}

/**
 * The If-Match header for a write, from the resource as it was read (or its etag): the server
 * refuses the write with 409 (code 7030, `metadata.current_etag`) if it changed since.
 *
 *   await wsp.PATCH('/v1/dashboards/{id}', { params: { path: { id }, header: ifMatch(dashboard) }, body });
 */
export function ifMatch(resource: { etag: string } | string): { 'if-match': string } {
  return { 'if-match': typeof resource === 'string' ? resource : resource.etag };
}
