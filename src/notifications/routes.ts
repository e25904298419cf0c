import type { App } from '../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { requestCtx } from '../http/context.js';
import { ListNotificationsQuery, NotificationList, NotificationParams } from './schemas.js';
import type { NotificationService } from './service.js';

/** User-scoped (no Service-Context needed; a workspace API token gets 403), with the spec's tagged 401. */
const USER_ROUTE = { scope: 'user', taggedUnauthorized: true } as const;

export function notificationRoutes(app: App, notifications: NotificationService): void {
  app.get(
    '/notifications',
    {
      config: USER_ROUTE,
      schema: {
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
      config: USER_ROUTE,
      schema: {
        tags: ['notifications'],
        summary: 'Mark one notification read (idempotent)',
        description:
          'No body. 204 for any well-formed id: an already-read, unknown or someone else\'s notification succeeds without effect, so nothing about it leaks.',
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
