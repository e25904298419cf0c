import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/fastify-types.js';
import type { Authenticator } from '../auth/authenticator.js';
import { ApiError } from '../shared/errors.js';
import type { FixedWindowLimiter } from '../http/rate-limit.js';
import { decidedPage, formPage, PAGE_HEADERS } from './device-page.js';
import type { DeviceService } from './service.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../http/pipeline.js';

const PageQuery = Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 64 })) });
const PageForm = Type.Object({
  user_code: Type.Optional(Type.String({ maxLength: 64 })),
  session_token: Type.Optional(Type.String({ maxLength: 8192 })),
  action: Type.Optional(Type.String({ maxLength: 16 })),
});

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(body);
}

/**
 * `GET /device` shows the form, `POST /device` decides. Both are pages for people, not API
 * routes: hidden from the OpenAPI document, and every answer (errors too) is HTML. The page
 * never says whether a code exists before the person has authenticated, so it cannot be used
 * to probe codes around the guess limit.
 */
export function devicePageRoutes(app: App, devices: DeviceService, authenticateSession: Authenticator, authFailures: FixedWindowLimiter): void {
  const pageErrors = async (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err.statusCode && err.statusCode < 500) return html(reply, 400, formPage({ error: 'The form could not be read; please submit it again.' }));
    if (isDatabaseUnavailable(err)) {
      return html(reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS)), 503, formPage({ error: 'The service cannot reach its database right now; please try again in a few seconds.' }));
    }
    request.log.error({ err }, 'device page failed');
    return html(reply, 500, formPage({ error: 'Something went wrong on our side; please try again.' }));
  };

  app.get(
    '/device',
    { config: { auth: 'none' }, errorHandler: pageErrors, schema: { hide: true, querystring: PageQuery } },
    async (request, reply) => html(reply, 200, formPage({ userCode: request.query.user_code ?? '' })),
  );

  app.post(
    '/device',
    { config: { auth: 'none' }, errorHandler: pageErrors, schema: { hide: true, body: PageForm } },
    async (request, reply) => {
      const { user_code: userCode = '', session_token: token = '', action } = request.body ?? {};
      if (action !== 'approve' && action !== 'deny') return html(reply, 400, formPage({ userCode, error: 'Choose Approve or Deny.' }));
      if (!userCode.trim()) return html(reply, 400, formPage({ userCode, error: 'Enter the code your device shows.' }));
      let principal;
      try {
        principal = await authenticateSession(`Bearer ${token.trim()}`);
      } catch (err) {
        if (isDatabaseUnavailable(err)) throw err;
        // The same per-address limit as failed authentication everywhere else (CONTRACT §1).
        const wait = authFailures.hit(request.ip);
        if (wait > 0) return html(reply.header('retry-after', String(wait)), 429, formPage({ userCode, error: `Too many failed sign-ins from this address. Try again in ${wait} seconds.` }));
        return html(reply, 401, formPage({ userCode, error: 'That session token is not valid (unknown, expired or revoked).' }));
      }
      if (principal.kind !== 'session') {
        return html(reply, 403, formPage({ userCode, error: 'Use a session token: a workspace API token acts for no user.' }));
      }
      try {
        const ctx = { principal, workspaceId: null, role: null, actorId: principal.userId };
        const login = await devices.decide(ctx, userCode, request.ip, action);
        return html(reply, 200, decidedPage(login.state, login.user_code, login.client_id));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
        const retryAfter = Number(err.headers['retry-after'] ?? 0);
        const message = retryAfter ? `Too many wrong codes. Try again in ${Math.ceil(retryAfter / 60)} minute(s).` : err.message;
        return html(reply, err.status, formPage({ userCode, error: message }));
      }
    },
  );
}
