import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BASIC_CHALLENGE, basicCredential } from '../auth/basic.js';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { isDatabaseUnavailable, isStorageFull, isTemporarilyRefused } from '../db/unavailable.js';
import { RepositoryVolumeError } from '../git/volume.js';
import { BRANCH_BUSY_RETRY_AFTER_SECONDS, BranchBusyError } from '../git/branch-busy.js';
import type { Authenticator, CredentialLookups } from '../auth/authenticator.js';
import { requireRouteRole, requireScope, resolveContext } from '../auth/workspace-context.js';
import { ApiError, envelope } from '../shared/errors.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { validationFailure } from './validation.js';
import { claimKey, completeKey, fingerprint, releaseKey, settleKey } from './idempotency.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH, WORKSPACE_WIRE_ID_MAX_LENGTH, WORKSPACE_WIRE_ID_PATTERN } from './schemas.js';
import { credentialKey, rateLimited, type FixedWindowLimiter, type SharedRateLimit, type WindowState } from './rate-limit.js';
import type { App } from './fastify-types.js';
import type { RequestOrigin } from '../events/record.js';
import { cookieValue, sameSecret, SESSION_COOKIE } from './cookies.js';

const ENCODED_COLON = /%3a/i;
const WRITE_METHODS = new Set(['POST', 'PATCH', 'DELETE', 'PUT']);
/** Response headers worth replaying with a stored idempotent response. */
const REPLAYED_HEADERS = ['content-type', 'etag', 'location'];

interface PipelineDeps {
  db: Kysely<DB>;
  clock: Clock;
  authenticate: Authenticator;
  /** Membership roles, for Service-Context (the same lookups the authenticator was given). */
  roleOf: CredentialLookups['roleOf'];
  /** Keys the Idempotency-Key fingerprints (shared by every instance, from the settings table). */
  fingerprintKey: Buffer;
  /** Failed authentications per client address (always on) and, when set, requests per credential. */
  limits?: { authFailures?: FixedWindowLimiter; requests?: SharedRateLimit };
  /** The origin of WSP_PUBLIC_URL: what a cookie write's Origin header must be, when it has one. */
  publicOrigin: string;
}

/**
 * docs/spec-gaps.md, "Accounts and sign-in": a write made with the session cookie carries the session's CSRF token in
 * X-CSRF-Token, and comes from this server's origin when the browser says where it comes from.
 * A page elsewhere can make the browser send the cookie, but can read neither the token nor
 * change Origin.
 */
/** What the events of a request record of where it came from (docs/spec-gaps.md, "Events and the audit log"). */
export function originOf(request: FastifyRequest): RequestOrigin {
  const ua = request.headers['user-agent'];
  return { requestId: request.id, ip: request.ip ?? null, userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null };
}

function checkCookieWrite(request: FastifyRequest, csrfToken: string | null, publicOrigin: string): void {
  const sent = request.headers['x-csrf-token'];
  if (typeof sent !== 'string' || csrfToken === null || !sameSecret(sent, csrfToken)) {
    throw new ApiError('CSRF_REJECTED', { message: 'A write made with the session cookie needs the X-CSRF-Token header: the csrf_token GET /v1/me shows', path: ['headers', 'x-csrf-token'] });
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== publicOrigin) {
    throw new ApiError('CSRF_REJECTED', { message: `A write made with the session cookie must come from ${publicOrigin}, not ${origin.slice(0, 100)}`, path: ['headers', 'origin'] });
  }
}

/** What a client is told to wait when the database is unreachable: a restart or failover takes seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
/** A volume is remounted or repaired by hand: minutes, but a client polling sooner loses nothing. */
export const REPOSITORY_RETRY_AFTER_SECONDS = 30;

const SERVICE_CONTEXT_RE = new RegExp(WORKSPACE_WIRE_ID_PATTERN);

/** Maps anything thrown during a request to the spec's envelope. Never leaks a stack or SQL. */
export function toApiError(err: FastifyError | Error): ApiError {
  if (err instanceof ApiError) return err;
  const fe = err as FastifyError & { validationContext?: string };
  if (fe.validation) return validationFailure(fe.validation as never, fe.validationContext ?? 'body');
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', { path: ['headers', 'content-type'] });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('VALIDATION_FAILED', { message: 'Content-Length does not match the body', path: ['headers', 'content-length'] });
  }
  if (fe.statusCode === 400 && (err instanceof SyntaxError || /JSON|prototype|constructor/i.test(err.message))) {
    return new ApiError('MALFORMED_JSON', { message: `The request body is not valid JSON: ${err.message.slice(0, 200)}`, path: ['body'] });
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError('VALIDATION_FAILED', { message: err.message.slice(0, 300) });
  }
  if (err instanceof RepositoryVolumeError) {
    if (err.problem === 'full') return new ApiError('INSUFFICIENT_STORAGE', { message: `${err.message}: nothing was changed; retry once an operator has freed space` });
    const wait = String(REPOSITORY_RETRY_AFTER_SECONDS);
    return new ApiError('REPOSITORY_UNAVAILABLE', {
      message: `${err.message}: nothing was changed; retry after Retry-After seconds`,
      metadata: { problem: err.problem, retry_after: wait },
      headers: { 'retry-after': wait },
    });
  }
  if (err instanceof BranchBusyError) {
    const wait = String(BRANCH_BUSY_RETRY_AFTER_SECONDS);
    return new ApiError('BRANCH_BUSY', { metadata: { retry_after: wait }, headers: { 'retry-after': wait } });
  }
  if (isStorageFull(err)) return new ApiError('INSUFFICIENT_STORAGE');
  if (isDatabaseUnavailable(err)) {
    const wait = String(DATABASE_RETRY_AFTER_SECONDS);
    return new ApiError('DATABASE_UNAVAILABLE', { metadata: { retry_after: wait }, headers: { 'retry-after': wait } });
  }
  return new ApiError('INTERNAL');
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
  if (error.status === 401) {
    reply.header('www-authenticate', request.routeOptions.config?.basicAuth ? BASIC_CHALLENGE : 'Bearer');
    if (request.routeOptions.config?.taggedUnauthorized) {
      return reply.code(401).send({ _tag: 'Unauthorized', success: false, errors: [], result: {} });
    }
  }
  return reply.code(error.status).send(envelope(error.entries));
}

/**
 * The Authorization header as the authenticator reads it: on the routes git calls (`basicAuth`),
 * HTTP Basic is accepted too, its password taken as the bearer credential and a user name that
 * names a workspace taken as the Service-Context (a session acts in several).
 */
function credentialHeader(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!request.routeOptions.config?.basicAuth) return header;
  const basic = basicCredential(header);
  if (!basic) return header;
  if (SERVICE_CONTEXT_RE.test(basic.user) && request.headers['service-context'] === undefined) request.headers['service-context'] = basic.user;
  return `Bearer ${basic.password}`;
}

export function installPipeline(app: App, deps: PipelineDeps): void {
  const { db, clock, authenticate } = deps;
  const { authFailures, requests } = deps.limits ?? {};

  /**
   * Counts the request in one shared window (the credential's, then the workspace's): the
   * RateLimit-* headers show the tighter of the two; past the limit, 429 with Retry-After.
   */
  async function countRequest(reply: FastifyReply, key: string, whose: string): Promise<void> {
    const state: WindowState = await requests!.hit(key);
    const shown = Number(reply.getHeader('ratelimit-remaining') ?? Infinity);
    if (state.remaining <= shown) {
      reply.header('ratelimit-limit', String(requests!.limit));
      reply.header('ratelimit-remaining', String(state.remaining));
      reply.header('ratelimit-reset', String(state.resetSeconds));
    }
    if (state.over) throw rateLimited(state.resetSeconds, `More than ${requests!.limit} requests this minute from ${whose}`);
  }
  app.decorateRequest('principal', null);
  app.decorateRequest('ctx', null);
  app.decorateRequest('idem', null);
  app.decorateRequest('listRead', null);

  // 1. Credential (401) before anything is parsed or validated. Failed authentications are
  // counted per client address: past the limit they answer 429 until the window ends, while
  // requests that authenticate are never counted nor refused by it.
  app.addHook('onRequest', async (request, reply) => {
    const auth = request.routeOptions.config?.auth;
    if (request.is404 || auth === 'none') return;
    const authorization = credentialHeader(request);
    const cookie = authorization === undefined ? cookieValue(request.headers.cookie, SESSION_COOKIE) : undefined;
    if (auth === 'optional' && authorization === undefined && cookie === undefined) return;
    const listed = request.method === 'GET' ? request.routeOptions.config?.listWithCredential : undefined;
    const alongside = typeof listed === 'function' ? listed(request) : listed;
    let principal;
    try {
      const found = await authenticate(authorization, cookie, alongside);
      principal = found.principal;
      request.listRead = found.listRead;
    } catch (err) {
      const wait = err instanceof ApiError && err.status === 401 && authFailures ? authFailures.hit(request.ip) : 0;
      if (wait > 0) throw rateLimited(wait, 'Too many failed authentications from this address; retry after the time in Retry-After');
      throw err;
    }
    if (requests) await countRequest(reply, `c:${credentialKey(principal)}`, 'this user (all their sessions together) or API token');
    if (principal.kind === 'session' && principal.cookie && WRITE_METHODS.has(request.method)) checkCookieWrite(request, principal.cookie.csrfToken, deps.publicOrigin);
    request.principal = principal;
  });

  // 2. Validation runs between these (422). 3. Service-Context and role (403). 4. Idempotency.
  app.addHook('preHandler', async (request, reply) => {
    const config = request.routeOptions.config;
    // 2b. The route's clock-dependent checks of well-formedness: still 422, still before 403.
    if (config?.validate) config.validate(request, nowSeconds(clock));
    if (!request.principal || !config?.scope) return;
    const headers = request.headers as Record<string, string | undefined>;
    // The spec's header rules hold even on a route whose schema forgot to declare them.
    const named = headers['service-context'];
    if (named !== undefined && (named.length > WORKSPACE_WIRE_ID_MAX_LENGTH || !SERVICE_CONTEXT_RE.test(named))) {
      throw new ApiError('VALIDATION_FAILED', {
        message: `service-context must be a workspace id ws_<id> of 1-${WORKSPACE_WIRE_ID_MAX_LENGTH} characters`,
        path: ['headers', 'service-context'],
      });
    }
    const key = headers['idempotency-key'];
    const isWrite = WRITE_METHODS.has(request.method);
    if (isWrite && key !== undefined && (key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH)) {
      throw new ApiError('VALIDATION_FAILED', { message: `idempotency-key must be 1-${IDEMPOTENCY_KEY_MAX_LENGTH} characters`, path: ['headers', 'idempotency-key'] });
    }
    request.ctx = await resolveContext(deps.roleOf, request.principal, named, config.scope, originOf(request));
    if (requests && request.ctx.workspaceId) await countRequest(reply, `w:${request.ctx.workspaceId}`, 'all the credentials of this workspace together');
    requireRouteRole(request.ctx, config, isWrite);
    if (config.tokenScope) requireScope(request.principal, config.tokenScope);

    if (key === undefined || !isWrite) return;
    const scope = { workspaceId: request.ctx.workspaceId ?? '', principalId: request.ctx.actorId, key };
    const fp = fingerprint(deps.fingerprintKey, request.method, request.url, request.body, headers['if-match']);
    const tried: string[] = [];
    const outcome = await claimKey(db, clock, scope, fp, tried).catch((err: unknown) => {
      // The claim's statement may have committed with its answer lost (a connection cut, a
      // statement timeout): a claim left `running` would hold the key for its whole lease (409
      // 7031 to every retry). The request made no write yet, so any such claim is released.
      if (isDatabaseUnavailable(err)) {
        const giveUp = (e: unknown) => request.log.error({ err: e }, 'an idempotency claim could not be released');
        for (const token of tried) settleKey(() => releaseKey(db, { scope, token }), isDatabaseUnavailable, giveUp).catch(giveUp);
      }
      throw err;
    });
    switch (outcome.kind) {
      case 'claimed': {
        const claim = { scope, token: outcome.token };
        request.idem = { claim, replayed: false };
        request.ctx.claim = claim;
        return;
      }
      case 'answer_lost':
        throw new ApiError('IDEMPOTENCY_ANSWER_LOST', { path: ['headers', 'idempotency-key'] });
      case 'mismatch':
        throw new ApiError('IDEMPOTENCY_KEY_REUSED', { path: ['headers', 'idempotency-key'] });
      case 'in_flight':
        throw new ApiError('IDEMPOTENCY_IN_FLIGHT', { path: ['headers', 'idempotency-key'] });
      case 'replay':
        request.idem = { claim: null, replayed: true };
        for (const [k, v] of Object.entries(outcome.headers)) reply.header(k, v);
        reply.header('idempotent-replayed', 'true');
        return reply.code(outcome.status).send(outcome.body === '' ? undefined : outcome.body);
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('cache-control') && request.url.startsWith('/v1/')) reply.header('cache-control', 'no-store');
    const idem = request.idem;
    if (!idem?.claim) return payload;
    request.idem = null;
    const status = reply.statusCode;
    const claim = idem.claim;
    // A full disk too: the write has committed (or failed) already, and a completion or release
    // refused for want of space fits once an operator has freed some.
    const settle = (record: () => Promise<boolean>) => settleKey(record, isTemporarilyRefused, (err) => request.log.error({ err }, 'the end of an idempotency claim could not be recorded'));
    if (status >= 500 || status === 422) {
      await settle(() => releaseKey(db, claim));
      return payload;
    }
    const stored = idem.override ?? { status, body: payload };
    const body = typeof stored.body === 'string' ? stored.body : stored.body === undefined || stored.body === null ? '' : JSON.stringify(stored.body);
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (typeof v === 'string') headers[h] = v;
    }
    if (idem.override) headers['content-type'] = 'application/json; charset=utf-8';
    await settle(() => completeKey(db, claim, stored.status, body, headers));
    return payload;
  });

  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) request.log.error({ err }, 'request failed');
    return sendError(request, reply, apiError);
  });
}

/** Unknown routes are 404 (7000), and a known path with another method 405 (7001) with Allow. */
export function installNotFound(app: App): void {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: false });
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      try {
        router.on(m as never, route.url, () => {});
      } catch {
        // a duplicate shape (the same path under another prefix) is already known
      }
      const set = methodsByPath.get(route.url) ?? new Set();
      set.add(m);
      methodsByPath.set(route.url, set);
    }
  });
  // A custom method is named by a literal colon (`/installs/{id}:restore`). A percent-encoded one
  // is data (RFC 3986 §2.2: a reserved character encoded is not its delimiter), and no id of this
  // API contains a colon: such a path names nothing, whatever route its decoded form would match.
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (ENCODED_COLON.test(path))
      return sendError(request, reply, new ApiError('ROUTE_NOT_FOUND', { message: `No route ${request.method} ${path}: an encoded colon (%3A) is never a custom method's ':'` }));
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].filter((m) => m !== request.method && router.find(m as never, path));
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(request, reply, new ApiError('METHOD_NOT_ALLOWED', { message: `${request.method} is not allowed here; allowed: ${allowed.join(', ')}` }));
    }
    return sendError(request, reply, new ApiError('ROUTE_NOT_FOUND', { message: `No route ${request.method} ${path}` }));
  });
}
