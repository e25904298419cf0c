import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { requestCtx } from '../http/context.js';
import { DecisionBody, DeviceLogin } from './schemas.js';
import type { Decision, DeviceService } from './service.js';

/** `POST /v1/oauth/device/approve` and `/deny`: ordinary API endpoints (envelope errors). */
export function approvalRoutes(app: App, devices: DeviceService): void {
  for (const decision of ['approve', 'deny'] as const satisfies readonly Decision[]) {
    app.post(
      `/v1/oauth/device/${decision}`,
      {
        config: {
          scope: 'user',
          event: decision === 'approve' ? 'device_authorization.approved' : 'device_authorization.denied',
          operationIdWhy: 'a decision on a device login (RFC 8628), named for what it decides',
        },
        schema: {
          operationId: decision === 'approve' ? 'approveDeviceAuthorization' : 'denyDeviceAuthorization',
          tags: ['oauth'],
          summary: decision === 'approve' ? 'Approve a device login: its next poll gets a new session token of the caller' : 'Deny a device login: its next poll gets access_denied',
          description:
            'The user code is accepted in any case, with or without the dash. Wrong codes are limited per client IP and per user (429 with Retry-After). A user-scoped endpoint: a workspace API token gets 403.',
          headers: requestHeaders({ idempotencyKey: 'optional' }),
          body: DecisionBody,
          response: { 200: DeviceLogin, ...errorResponses(401, 403, 404, 409, 422, 429) },
        },
      },
      async (request) => devices.decide(requestCtx(request), request.body.user_code, request.ip, decision),
    );
  }
}
