import type { App } from '../http/fastify-types.js';
import { envelopeRef, errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { requestCtx } from '../http/context.js';
import { ListNotificationsQuery, NotificationList, NotificationParams, StreamHeaders } from './schemas.js';
import { callerUserId, NOTIFICATION_LIST_PREFIX, notificationListName, type NotificationService } from './service.js';
import type { NotificationStreams, StreamCredential } from './stream.js';
import type { Principal } from '../auth/principal.js';
import { canonicalId } from '../shared/ids.js';
import { Type } from '@sinclair/typebox';
import { admits } from '../http/accept.js';
import { ApiError } from '../shared/errors.js';

/** User-scoped (no Service-Context needed; a workspace API token gets 403), with the spec's tagged 401. */
const USER_ROUTE = { scope: 'user', taggedUnauthorized: true } as const;

export function notificationRoutes(app: App, notifications: NotificationService, streams: NotificationStreams): void {
  app.get(
    '/notifications/stream',
    {
      config: { ...USER_ROUTE, operationIdWhy: 'a stream of Server-Sent Events, not a resource' },
      schema: {
        operationId: 'streamNotifications',
        tags: ['notifications'],
        summary: "The caller's new notifications as they come (Server-Sent Events)",
        description:
          'A `text/event-stream`: one `notification` event per new notification (`id:` its id, `data:` the notification as GET /v1/notifications shows it), from any server instance, and a comment line every 15 s. `Last-Event-ID` (sent by browsers when they reconnect) resumes after that notification. The stream ends when the server shuts down, and within a few seconds of its credential ending (the session revoked or expired, the JWT past its `exp`) or of the user’s memberships changing (removed from a workspace, another role): reconnect with `Last-Event-ID` (a comment line `: closed: <reason>` says why). One user holds at most `WSP_STREAMS_PER_USER` streams on one server, and a server at most `WSP_STREAMS_PER_PROCESS`: one more is 429 (7500, 7501) with `Retry-After`. Cookie sessions work, so `new EventSource("/v1/notifications/stream", {withCredentials: true})` does.',
        headers: StreamHeaders,
        response: {
          200: { description: 'The event stream', content: { 'text/event-stream': { schema: Type.String() } } },
          ...errorResponses(401, 403, 406, 422),
          429: envelopeRef(
            'Too many streams open: this user already holds WSP_STREAMS_PER_USER on this server (7500), or this server serves WSP_STREAMS_PER_PROCESS (7501); `metadata.quota`, `limit`, `used`, and `Retry-After`. Also the failed-authentication limit (7007)',
          ),
        },
      },
    },
    async (request, reply) => {
      const ctx = requestCtx(request);
      const userId = callerUserId(ctx);
      // A client that accepts only something else (JSON) would wait forever on a stream it cannot read;
      // one that names no type, or any (curl's */*), gets the stream.
      if (!admits(request.headers.accept, 'text/event-stream')) {
        throw new ApiError('NOT_ACCEPTABLE', { message: 'This route answers only text/event-stream: send Accept: text/event-stream (EventSource does) or */*', path: ['headers', 'accept'] });
      }
      const last = request.headers['last-event-id'];
      const slot = await streams.admit(userId, streamCredential(ctx.principal), last === undefined ? null : canonicalId('ntf', last));
      reply.hijack();
      await streams.serve(slot, reply.raw, { 'x-request-id': request.id });
    },
  );

  app.get(
    '/notifications',
    {
      config: { ...USER_ROUTE, listVersion: (request) => notificationListName(callerUserId(requestCtx(request))), listWithCredential: { of: 'user', lists: NOTIFICATION_LIST_PREFIX } },
      schema: {
        operationId: 'listNotifications',
        tags: ['notifications'],
        summary: "The caller's most recent notifications: at most 50, newest first",
        description:
          '`unread=true` returns only unread ones; `unread=false`, like no `unread`, returns all. `limit` (1-50, default 50) and `cursor` page further. A 401 is exactly `{_tag: "Unauthorized", success: false, errors: [], result: {}}`.',
        headers: requestHeaders(),
        querystring: ListNotificationsQuery,
        response: { 200: NotificationList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => notifications.list(requestCtx(request), request.query),
  );

  app.patch(
    '/notifications/:id/read',
    {
      // Only the first read of a notification records it: the repeat changes nothing.
      config: { ...USER_ROUTE, event: 'notification.read', operationIdWhy: 'marks one notification read: `read` is what it does, not a resource' },
      schema: {
        operationId: 'readNotification',
        tags: ['notifications'],
        summary: 'Mark one notification read (idempotent)',
        description: "No body. 204 for any well-formed id: an already-read, unknown or someone else's notification succeeds without effect, so nothing about it leaks.",
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: NotificationParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      await notifications.markRead(requestCtx(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}

/** What a stream checks at every tick: a user route's principal is a session or a JWT (an API token was refused, 7024). */
function streamCredential(p: Principal): StreamCredential {
  if (p.kind === 'session') return { kind: 'session', sessionId: p.sessionId };
  if (p.kind === 'jwt') return { kind: 'jwt', expiresAt: p.expiresAt };
  throw new ApiError('USER_REQUIRED');
}
