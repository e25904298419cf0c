import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/fastify-types.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../shared/errors.js';
import type { FixedWindowLimiter } from '../http/rate-limit.js';
import { cookieValue, fromAnotherSite, sameSecret, SESSION_COOKIE, sessionCookie } from '../http/cookies.js';
import { originOf } from '../http/pipeline.js';
import { approvePage, decidedPage, PAGE_HEADERS, signInPage } from './device-page.js';
import type { DeviceService } from './service.js';
import { isTemporarilyRefused } from '../db/unavailable.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../http/pipeline.js';

const PageQuery = Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 64 })) });
const PageForm = Type.Object({
  user_code: Type.Optional(Type.String({ maxLength: 64 })),
  email: Type.Optional(Type.String({ maxLength: 254 })),
  password: Type.Optional(Type.String({ maxLength: 256 })),
  csrf_token: Type.Optional(Type.String({ maxLength: 128 })),
  action: Type.Optional(Type.String({ maxLength: 16 })),
});

/** What the page needs of the accounts and identity areas, given by the composition root. */
export interface DevicePageDeps {
  devices: DeviceService;
  /** The cookie session's principal (the authenticator, with JWTs off). */
  authenticate: Authenticator;
  authFailures: FixedWindowLimiter;
  /** POST /v1/sessions's sign-in, limits included. */
  signIn(email: string, password: string, client: { ip: string; userAgent: string | undefined; requestId: string }): Promise<{ token: string; expires_at: number; user_id: string; csrfToken: string }>;
  /** How the page names a user: their email, else their name, else their id. */
  whoIs(userId: string): Promise<string>;
  secureCookie: boolean;
  /** The origin of WSP_PUBLIC_URL: the only site whose pages may post the page's forms. */
  publicOrigin: string;
  oidcStartUrl: string | null;
  now(): number;
}

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(body);
}

/**
 * `GET /device` shows the form, `POST /device` signs in or decides. Pages for people, not API
 * routes: hidden from the OpenAPI document, and every answer (errors too) is HTML. Signed out,
 * the page signs the browser in (the `wsp_session` cookie); signed in, it decides with that
 * session, each decision carrying the session's CSRF token. It never says whether a code exists
 * before the person has signed in, so it cannot be used to probe codes around the guess limit.
 */
export function devicePageRoutes(app: App, deps: DevicePageDeps): void {
  const { devices } = deps;
  const pageErrors = async (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err.statusCode && err.statusCode < 500) return html(reply, 400, signInPage({ error: 'The form could not be read; please submit it again.', oidcStartUrl: deps.oidcStartUrl }));
    if (isTemporarilyRefused(err)) {
      return html(reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS)), 503, signInPage({ error: 'The service cannot reach its database right now; please try again in a few seconds.' }));
    }
    request.log.error({ err }, 'device page failed');
    return html(reply, 500, signInPage({ error: 'Something went wrong on our side; please try again.' }));
  };

  /** The browser's session, if its cookie names a live one. */
  const signedIn = async (request: FastifyRequest): Promise<(Principal & { kind: 'session' }) | null> => {
    const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
    if (cookie === undefined) return null;
    try {
      const p = (await deps.authenticate(undefined, cookie)).principal;
      return p.kind === 'session' ? p : null;
    } catch (err) {
      if (isTemporarilyRefused(err)) throw err;
      return null;
    }
  };
  const approveFor = async (p: Principal & { kind: 'session' }, userCode: string, error?: string) =>
    approvePage({ userCode, who: await deps.whoIs(p.userId), csrfToken: p.cookie?.csrfToken ?? '', ...(error ? { error } : {}) });
  const signInFor = (userCode: string, error?: string) => signInPage({ userCode, oidcStartUrl: deps.oidcStartUrl, ...(error ? { error } : {}) });

  app.get(
    '/device',
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Fastify awaits an async error handler (it sends what the promise resolves to); its route type says void
    { config: { auth: 'none' }, errorHandler: pageErrors, schema: { hide: true, querystring: PageQuery } },
    async (request, reply) => {
      const userCode = request.query.user_code ?? '';
      const p = await signedIn(request);
      return html(reply, 200, p ? await approveFor(p, userCode) : signInFor(userCode));
    },
  );

  app.post(
    '/device',
    {
      // The page's form does what the API's sign-in, approve and deny do, and records what they record.
      config: { auth: 'none', event: ['session.created', 'device_authorization.approved', 'device_authorization.denied'] },
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Fastify awaits an async error handler (it sends what the promise resolves to); its route type says void
      errorHandler: pageErrors,
      schema: { hide: true, body: PageForm },
    },
    async (request, reply) => {
      const { user_code: userCode = '', action, email = '', password = '', csrf_token: csrf = '' } = request.body ?? {};
      // Login CSRF (RFC 9700 §4.4.1.8): a page elsewhere could sign this browser in as its author, or
      // decide with the browser's session. Nothing is changed for a form another site posted.
      if (fromAnotherSite(request.headers, deps.publicOrigin)) {
        return html(reply, 403, signInFor(userCode, `This form was sent from another site. Open ${deps.publicOrigin}/device yourself to sign in.`));
      }
      if (action === 'sign_in') {
        if (!email.trim() || !password) return html(reply, 400, signInFor(userCode, 'Enter your email and password.'));
        try {
          const s = await deps.signIn(email, password, { ip: request.ip, userAgent: request.headers['user-agent'], requestId: request.id });
          reply.header('set-cookie', sessionCookie(s.token, s.expires_at - deps.now(), deps.secureCookie));
          return html(reply, 200, approvePage({ userCode, who: await deps.whoIs(s.user_id), csrfToken: s.csrfToken }));
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
          const retryAfter = Number(err.headers['retry-after'] ?? 0);
          const message =
            err.status === 429
              ? `Too many failed sign-ins. Try again in ${Math.ceil(retryAfter / 60)} minute(s).`
              : err.status === 401
                ? 'The email or password is wrong.'
                : 'Enter a valid email address.';
          return html(reply, err.status === 422 ? 400 : err.status, signInFor(userCode, message));
        }
      }
      if (action !== 'approve' && action !== 'deny') return html(reply, 400, signInFor(userCode, 'Choose Approve or Deny.'));
      const principal = await signedIn(request);
      if (!principal) {
        // The same per-address limit as failed authentication everywhere else (docs/spec-gaps.md, "Conventions").
        const wait = cookieValue(request.headers.cookie, SESSION_COOKIE) === undefined ? 0 : deps.authFailures.hit(request.ip);
        if (wait > 0) return html(reply.header('retry-after', String(wait)), 429, signInFor(userCode, `Too many failed sign-ins from this address. Try again in ${wait} seconds.`));
        return html(reply, 401, signInFor(userCode, 'Sign in first: your session has ended or you are not signed in.'));
      }
      if (!principal.cookie?.csrfToken || !sameSecret(csrf, principal.cookie.csrfToken)) {
        return html(reply, 403, await approveFor(principal, userCode, 'This form is out of date; check the code and choose again.'));
      }
      if (!userCode.trim()) return html(reply, 400, await approveFor(principal, userCode, 'Enter the code your device shows.'));
      try {
        // The same request, address and agent in the audit log as the API's approve (docs/spec-gaps.md, "Events and the audit log").
        const ctx = { principal, workspaceId: null, role: null, actorId: principal.userId, origin: originOf(request) };
        const login = await devices.decide(ctx, userCode, request.ip, action);
        return html(reply, 200, decidedPage(login.state, login.user_code, login.client_id));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
        const retryAfter = Number(err.headers['retry-after'] ?? 0);
        const message = retryAfter ? `Too many wrong codes. Try again in ${Math.ceil(retryAfter / 60)} minute(s).` : err.message;
        return html(reply, err.status, await approveFor(principal, userCode, message));
      }
    },
  );
}
