import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import Fastify, { LogController, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import { repoRoot, type Config } from './config.js';
import { probeVolume } from './git/volume.js';
import { envelope, ErrorCodes } from './shared/errors.js';
import type { Database } from './db/database.js';
import { systemClock, type Clock } from './shared/clock.js';
import { ulid } from './shared/ids.js';
import { createAuthenticator } from './auth/authenticator.js';
import { createJwtVerifier, type JwtVerifier } from './auth/jwt.js';
import { closeUndeclaredParts, validatorCompiler } from './http/validation.js';
import { LazyCompilation } from './http/lazy-compilation.js';
import { holdHeaderFirstKeys } from './http/header-first-keys.js';
import { installJsonParser } from './http/json-body.js';
import { installNotFound, installPipeline } from './http/pipeline.js';
import { installMetrics } from './http/metrics.js';
import { FixedWindowLimiter, SharedRateLimit } from './http/rate-limit.js';
import { systemRoutes } from './http/system-routes.js';
import { installReferencePage } from './http/reference-page.js';
import { conditionalGets } from './http/conditional-get.js';
import { listCache } from './http/list-cache.js';
import { documentPipelineErrors, DocumentedErrorEnvelope, openApiOptions } from './http/openapi.js';
import { checkTokenScopes } from './http/token-scopes.js';
import { checkRouteRoles } from './http/route-roles.js';
import { checkRouteEvents } from './http/route-events.js';
import { checkOperationIds } from './http/operation-ids.js';
import type { App } from './http/fastify-types.js';
import { settingsStore } from './db/settings.js';
import { createDeps } from './service-deps.js';
import { ROOT_AREAS, V1_AREAS } from './areas.js';
import type { RunnerOptions } from './jobs/runner.js';
import { createRunner } from './worker.js';
import { loggerOptions, requestLineWriter } from './log.js';
import { lazyRequestLogger } from './http/request-logger.js';

export { loggerOptions };

export interface AppOptions {
  config: Config;
  database: Database;
  clock?: Clock;
  /** Fastify logger settings; tests pass false. */
  logger?: FastifyServerOptions['logger'];
  verifyJwt?: JwtVerifier;
  /** Process-wide metrics (event loop, memory): for the real server, not for tests. */
  processMetrics?: boolean;
  /** Settings of this process's job worker (started by the caller, not here). */
  jobs?: RunnerOptions;
  /** The compute area's clock, when not `clock` (tests of real processes move it). */
  computeClock?: Clock;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Fastify ignores a bare hop count (it cannot tell the proxy from a client that reached the
 * server directly), so the count is a function here: the peer and the next hops-1 addresses are
 * proxies. Meant for a server only its proxies can reach; addresses or ranges are safer.
 */
function trustProxyOption(trust: Config['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/** Builds the whole HTTP application on an open, migrated database. */
export async function buildApp(opts: AppOptions): Promise<App> {
  const { config, database } = opts;
  const { db } = database;
  const clock = opts.clock ?? systemClock;

  // Before any schema compiles (src/http/header-first-keys.ts).
  holdHeaderFirstKeys();
  const compilation = new LazyCompilation();
  const app = Fastify({
    logger: opts.logger ?? false,
    // Without a logger Fastify hands every request the app's own (silent) logger, and a factory
    // would only add work.
    ...(opts.logger ? { childLoggerFactory: lazyRequestLogger } : {}),
    schemaController: { compilersFactory: compilation.compilersFactory(validatorCompiler) },
    bodyLimit: config.bodyLimitBytes,
    // Node's own defaults (no request deadline under Fastify, a 16 KiB header limit a command-line
    // flag can raise) would let a client hold a connection for ever by sending slowly.
    requestTimeout: config.http.requestTimeoutMs,
    connectionTimeout: config.http.idleTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    // Node checks request deadlines at this interval (30 s by default), so it bounds how late a
    // slow client is closed.
    http: { maxHeaderSize: config.http.maxHeaderBytes, connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs) },
    trustProxy: trustProxyOption(config.trustProxy),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : `req_${ulid()}`;
    },
    // One line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    // While closing, a request that still arrives on an open keep-alive connection is served
    // (then that connection closes) rather than refused with a 503 outside the envelope;
    // new connections are refused.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 512 },
    // Requests Node's HTTP parser refuses (bad syntax, headers over 16 KiB, too slow) still
    // answer in the envelope, and the connection is closed.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const name = err.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'BAD_REQUEST';
      const def = ErrorCodes[name];
      const body = JSON.stringify(envelope([{ code: def.code, message: def.message }]));
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${def.status} ${STATUS_CODES[def.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy(err);
    },
    // Errors the router raises before any route runs still answer in the envelope.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the reply it returns is a thenable that Fastify's router ignores; the answer is sent here
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is longer than any id (512 characters at most)' : 'The URL is not valid (bad percent-encoding)';
      return reply.code(422).send(envelope([{ code: ErrorCodes.VALIDATION_FAILED.code, message, path: ['path'] }]));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.server.headersTimeout = config.http.headersTimeoutMs;
  app.decorate('schemaCompilation', compilation);
  // Every route takes exactly what it declares: no body and no query parameters unless it says so.
  closeUndeclaredParts(app);
  // Its policy is declared with it, and start-up stops at a route that lacks a part: what it
  // answers (the pipeline's own statuses added by one rule), the scope an API token needs, the
  // event a write records, the name generators give it. Their order is the order of the notes
  // in its description.
  documentPipelineErrors(app);
  checkTokenScopes(app);
  checkRouteRoles(app);
  checkRouteEvents(app);
  checkOperationIds(app);
  // Bodies are JSON (docs/spec-gaps.md, "Conventions"): Fastify's built-in text/plain parser would let a text body
  // through to validation (422) instead of the 415 every other non-JSON type gets.
  app.removeContentTypeParser('text/plain');
  installJsonParser(app);
  app.addSchema(DocumentedErrorEnvelope);

  const deps = await createDeps({ config, database, clock, log: app.log, computeClock: opts.computeClock });
  const verifyJwt = opts.verifyJwt ?? (await createJwtVerifier(config.jwt, clock));
  const authenticate = createAuthenticator({ clock, verifyJwt, lookups: deps.credentials });

  await app.register(swagger, openApiOptions(config.publicUrl));
  // The reference page and its assets are public (docs/spec-gaps.md, "Conventions"), like the document itself.
  installReferencePage(app, () => app.swagger());

  installNotFound(app);
  installPipeline(app, {
    db,
    clock,
    authenticate,
    roleOf: deps.credentials.roleOf,
    publicOrigin: new URL(config.publicUrl).origin,
    fingerprintKey: Buffer.from(await settingsStore.getOrCreate(db, 'idempotency_hmac_key', () => randomBytes(32).toString('base64')), 'base64'),
    limits: {
      authFailures: new FixedWindowLimiter(clock, config.authFailuresPerMinute),
      ...(config.rateLimitPerMinute ? { requests: new SharedRateLimit(db, clock, config.rateLimitPerMinute) } : {}),
    },
  });
  // After the pipeline's own hooks: a versioned list's 304 before its page is read; every other
  // GET's answer gets its ETag, and a 304 when it is unchanged.
  listCache(app, db);
  conditionalGets(app);
  const metrics = installMetrics(app, opts.processMetrics ?? false);

  const requestLine = requestLineWriter(opts.logger);
  if (requestLine) {
    app.addHook('onResponse', async (request, reply) => {
      requestLine({ reqId: request.id, method: request.method, route: request.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 });
    });
  }

  const repositories = repoRoot(config);
  systemRoutes(app, db, metrics, { repositories: () => probeVolume(repositories) });
  app.get('/v1/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger());

  // The job runner is composed apart from HTTP (src/worker.ts), as `wsp worker` composes it.
  const jobs = createRunner(deps, opts.jobs);
  app.decorate('jobs', jobs);
  app.addHook('onClose', async () => jobs.stop());
  // Once closing, an answer ends its keep-alive connection (Node closes it after the response):
  // the client sends its next request to a server that takes it, not into a closed socket.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  await app.register(
    async (v1) => {
      for (const mount of V1_AREAS) mount(v1, deps);
    },
    { prefix: '/v1' },
  );
  await app.register(async (root) => {
    for (const mount of ROOT_AREAS) mount(root, deps);
  });

  await app.ready();
  return app;
}
