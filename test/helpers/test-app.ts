import { before, after } from 'node:test';
import { createClient, type paths, type WspClient } from '@workspace-platform/sdk';
import { createTestApp, type Seed, type TestApp, type TestAppOptions } from './harness.js';
import type { App } from '../../src/http/fastify-types.js';

export interface UseTestAppOptions extends TestAppOptions {
  /** The seeded workspace's name (default 'Acme'); false: no seed (`h.seeded` then throws). */
  seed?: string | false;
  /**
   * More set-up, run in the same before() once the app and the seed exist (other seeds, a fixture,
   * a listening server, the OpenAPI document): the file's state is ready before its first test.
   */
  setup?: (h: TestAppHandle) => unknown;
  /** Run in the same after(), before the app closes (a server, a directory, a provider to stop). */
  teardown?: (h: TestAppHandle) => unknown;
}

export interface TestAppHandle extends TestApp {
  /**
   * The seeded workspace (owner, admin, member, API token). A stable object that reads the seed
   * made in `before`, so a file can hold it at load time: `const s = h.seeded`.
   */
  readonly seeded: Seed;
  /**
   * The SDK's typed client over `app.inject`, with a credential and a Service-Context when given.
   * No retries and no added Idempotency-Key: a test sends exactly the request it writes.
   */
  client(token?: string, workspace?: string, headers?: Record<string, string>): WspClient;
}

/**
 * A test app for the whole file, with its teardown registered (as fastify/demo's `build(t)`):
 * `const h = useTestApp(); const s = h.seeded;` replaces the `before(createTestApp + seed)` /
 * `after(close)` header. It calls node:test's `before` and `after` itself, so call it at the top
 * level of the file (or of a describe); further `before` hooks of the file run after it.
 */
export function useTestApp(options: UseTestAppOptions | (() => UseTestAppOptions | Promise<UseTestAppOptions>) = {}): TestAppHandle {
  let seedName: string | false = 'Acme';
  let current: TestApp | undefined;
  let seed: Seed | undefined;
  const ready = (): TestApp => {
    if (!current) throw new Error('useTestApp: the app is made in before(); read it inside a hook or a test');
    return current;
  };
  const seedReady = (): Seed => {
    if (!seed) throw new Error(seedName === false ? 'useTestApp({ seed: false }) has no seeded workspace' : 'useTestApp: the seed is made in before(); read it inside a hook or a test');
    return seed;
  };
  let opts: UseTestAppOptions = {};
  before(async () => {
    // A function: options known only in before() (a key pair, a provider's or a server's address).
    opts = typeof options === 'function' ? await options() : options;
    const { seed: name = 'Acme', setup, teardown: _, ...appOpts } = opts;
    seedName = name;
    current = await createTestApp(appOpts);
    if (seedName !== false) seed = await current.seed(seedName);
    await setup?.(handle);
  });
  after(async () => {
    try {
      if (current) await opts.teardown?.(handle);
    } finally {
      await current?.close();
    }
  });
  const seeded: Seed = {
    get workspaceId() {
      return seedReady().workspaceId;
    },
    get owner() {
      return seedReady().owner;
    },
    get admin() {
      return seedReady().admin;
    },
    get member() {
      return seedReady().member;
    },
    get apiToken() {
      return seedReady().apiToken;
    },
    get apiTokenId() {
      return seedReady().apiTokenId;
    },
  };
  const handle: TestAppHandle = {
    get app() {
      return ready().app;
    },
    get database() {
      return ready().database;
    },
    get clock() {
      return ready().clock;
    },
    get admin() {
      return ready().admin;
    },
    get config() {
      return ready().config;
    },
    get dbEnv() {
      return ready().dbEnv;
    },
    seed: (name?: string) => ready().seed(name),
    close: () => ready().close(),
    seeded,
    client: (token, workspace, headers) => injectClient(() => ready().app, token, workspace, headers),
  };
  return handle;
}

/**
 * The SDK's client (openapi-fetch, the schemas' types) sending through `app.inject`: the request
 * goes through the whole Fastify pipeline, with no socket. `app` is read at each call, so a
 * client made at load time works once the app is.
 */
export function injectClient(app: App | (() => App), token?: string, workspace?: string, headers: Record<string, string> = {}): WspClient {
  const appOf = typeof app === 'function' ? app : () => app;
  return createClient({ baseUrl: 'http://localhost', token, workspace, headers, fetch: injectFetch(appOf), retries: 0, idempotencyKeys: false });
}

/** A `fetch` answered by `app.inject`. */
export function injectFetch(app: () => App): (input: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const res = await app().inject({
      method: request.method as 'GET',
      url: url.pathname + url.search,
      headers,
      ...(body ? { payload: body } : {}),
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, String(v));
    }
    const empty = res.statusCode === 204 || res.statusCode === 304 || request.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: out });
  };
}

type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;
/**
 * The JSON body of an operation's answer with `status` (default 200), from the OpenAPI document's
 * types: `Body<'/v1/audit_events', 'get'>`, where a test reads a raw `app.inject` answer.
 */
export type Body<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends { responses: infer R } ? (S extends keyof R ? JsonOf<R[S]> : never) : never;
export type { Schemas } from '@workspace-platform/sdk';
