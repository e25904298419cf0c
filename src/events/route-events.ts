import type { FastifyInstance } from 'fastify';
import type { EventType } from './event-type-schemas.js';

/**
 * The event each write operation records on success (CONTRACT §11), by its path in the OpenAPI
 * document. The document shows it (`x-event-type`); test/events/every-write.test.ts holds every
 * write operation to it: one event of this type on success, none on failure. A write that turns
 * out to change nothing (a PATCH equal to the current state, a notification already read)
 * records nothing. Writes not listed record no event: previews and git's upload-pack only read,
 * and a device authorization is a client's, before anyone is signed in (the token endpoint
 * records the `session.created` of the session it makes).
 */
export const ROUTE_EVENTS: Record<string, EventType> = {
  'POST /v1/workspaces': 'workspace.created',
  'PATCH /v1/workspaces/{id}': 'workspace.updated',
  'PATCH /v1/workspaces/{id}/members/{user_id}': 'member.updated',
  'DELETE /v1/workspaces/{id}/members/{user_id}': 'member.removed',
  'POST /v1/workspaces/{id}/invitations': 'invitation.created',
  'DELETE /v1/workspaces/{id}/invitations/{inv}': 'invitation.revoked',
  'POST /v1/invitations:accept': 'invitation.accepted',
  'POST /v1/setup': 'workspace.set_up',
  'POST /v1/api_tokens': 'api_token.created',
  'DELETE /v1/api_tokens/{id}': 'api_token.revoked',
  'POST /v1/sessions': 'session.created',
  'DELETE /v1/sessions/current': 'session.revoked',
  'DELETE /v1/sessions/{id}': 'session.revoked',
  'POST /v1/oauth/token': 'session.created',
  'POST /v1/oauth/device/approve': 'device_authorization.approved',
  'POST /v1/oauth/device/deny': 'device_authorization.denied',
  'PATCH /v1/notifications/{id}/read': 'notification.read',
  'POST /v1/secrets': 'secret.created',
  'DELETE /v1/secrets/{id}': 'secret.deleted',
  'POST /v1/secrets/{id}/versions': 'secret_version.created',
  'POST /v1/secrets/{id}/versions/{vid}:enable': 'secret_version.enabled',
  'POST /v1/secrets/{id}/versions/{vid}:disable': 'secret_version.disabled',
  'POST /v1/secrets/{id}/versions/{vid}:destroy': 'secret_version.destroyed',
  'GET /v1/secrets/{id}/versions/{vid}:access': 'secret_version.accessed',
  'POST /v1/compute/configs': 'compute_config.created',
  'DELETE /v1/compute/configs/{id}': 'compute_config.deleted',
  'POST /v1/machines': 'machine.created',
  'DELETE /v1/machines/{id}': 'machine.deleted',
  'POST /v1/machines/{id}:suspend': 'machine.suspended',
  'POST /v1/machines/{id}:resume': 'machine.resumed',
  'POST /v1/compute/suspensions/{id}:resume': 'machine.resumed',
  'POST /v1/packages': 'package.created',
  'POST /v1/packages/{id}/versions': 'package_version.created',
  'POST /v1/installs': 'install.created',
  'PATCH /v1/installs/{id}': 'install.updated',
  'POST /v1/installs/{id}:restore': 'install.restored',
  'POST /v1/snippets': 'snippet.created',
  'PATCH /v1/snippets/{id}': 'snippet.updated',
  'DELETE /v1/snippets/{id}': 'snippet.deleted',
  'POST /v1/snippets/{id}:archive': 'snippet.archived',
  'POST /v1/snippets/{id}:unarchive': 'snippet.unarchived',
  'POST /v1/dashboards': 'dashboard.created',
  'PATCH /v1/dashboards/{id}': 'dashboard.updated',
  'DELETE /v1/dashboards/{id}': 'dashboard.deleted',
  'POST /v1/dashboards/{id}:reset': 'dashboard.reset',
  'POST /v1/dashboards/{id}/revisions/{revision_id}:restore': 'dashboard.restored',
  'POST /v1/webhooks': 'webhook.created',
  'PATCH /v1/webhooks/{id}': 'webhook.updated',
  'DELETE /v1/webhooks/{id}': 'webhook.deleted',
  'POST /v1/webhooks/{id}:test': 'webhook.tested',
  'POST /v1/webhooks/{id}/deliveries/{did}:retry': 'webhook_delivery.retried',
};

/** A Fastify route path as the OpenAPI document writes it: `/a/:id(^[^:]+)::b` is `/a/{id}:b`. */
export const documentPath = (url: string): string =>
  url
    .replace(/::/g, '\u0000')
    .replace(/:([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?/g, '{$1}')
    .replace(/\u0000/g, ':');

/** Shows each operation's event in the document (`x-event-type`, and a line of its description). */
export function documentRouteEvents(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const type = methods.map((m) => ROUTE_EVENTS[`${m} ${documentPath(route.url)}`]).find((t) => t !== undefined);
    if (!type || !route.schema) return;
    const note = `Records the event \`${type}\` (GET /v1/audit_events, webhooks).`;
    route.schema = { ...route.schema, 'x-event-type': type, description: route.schema.description ? `${route.schema.description}\n\n${note}` : note } as typeof route.schema;
  });
}
