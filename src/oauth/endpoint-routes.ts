import type { App } from '../http/fastify-types.js';
import { errorResponses } from '../http/schemas.js';
import { AuthorizationServerMetadata, DEVICE_CODE_GRANT, DeviceAuthorizationBody, DeviceAuthorizationResponse, OAuthErrorResponse, TokenBody, TokenResponse } from './schemas.js';
import { noStore, oauthErrorHandler } from './oauth-error.js';
import type { DeviceService } from './service.js';
import { GUESS_WINDOW_SECONDS, MAX_LOGINS_STARTED_PER_IP } from './guess-limiter.js';

const FORM_OR_JSON = ['application/x-www-form-urlencoded', 'application/json'];

/**
 * The RFC 8628 endpoints a device calls without a credential. Mounted in a scope that parses
 * form bodies (OAuth's native encoding) as well as JSON; their errors are RFC 6749's, so each
 * route has its own error handler instead of the envelope.
 */
export function oauthEndpointRoutes(app: App, devices: DeviceService): void {
  app.post(
    '/v1/oauth/device_authorization',
    {
      config: {
        auth: 'none',
        event: null,
        eventWhy: "a device login is a client's, before anyone is signed in: the approval (device_authorization.approved or denied) and the token endpoint (session.created) record what it leads to",
        operationIdWhy: 'the device authorization request of RFC 8628, whose resource is one device authorization',
      },
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Fastify awaits an async error handler (it sends what the promise resolves to); its route type says void
      errorHandler: oauthErrorHandler({ checksGrantType: false }),
      schema: {
        operationId: 'createDeviceAuthorization',
        tags: ['oauth'],
        summary: 'Start a device login (RFC 8628 §3.1)',
        description: `Form or JSON. Unknown client_id: invalid_client; a missing one: invalid_request. More than ${MAX_LOGINS_STARTED_PER_IP} logins started from one client address in ${GUESS_WINDOW_SECONDS / 60} minutes: 429 slow_down with Retry-After. Errors are RFC 6749 JSON with Cache-Control: no-store.`,
        security: [],
        consumes: FORM_OR_JSON,
        body: DeviceAuthorizationBody,
        response: { 200: DeviceAuthorizationResponse, 400: OAuthErrorResponse, 429: OAuthErrorResponse, 503: OAuthErrorResponse },
      },
    },
    async (request, reply) => noStore(reply).send(await devices.start(request.body, request.ip)),
  );

  app.post(
    '/v1/oauth/token',
    {
      config: { auth: 'none', event: 'session.created' },
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Fastify awaits an async error handler (it sends what the promise resolves to); its route type says void
      errorHandler: oauthErrorHandler({ checksGrantType: true }),
      schema: {
        operationId: 'createOauthToken',
        tags: ['oauth'],
        summary: 'Poll for the session token of a device login (RFC 8628 §3.4)',
        description: `grant_type \`${DEVICE_CODE_GRANT}\`. Until the user decides: authorization_pending; sooner than the interval: slow_down (the interval grows by 5 s); then access_denied, expired_token, or the token once (a redeemed or unknown device_code: invalid_grant).`,
        security: [],
        consumes: FORM_OR_JSON,
        body: TokenBody,
        response: { 200: TokenResponse, 400: OAuthErrorResponse, 503: OAuthErrorResponse },
      },
    },
    async (request, reply) => noStore(reply).send(await devices.poll(request.body, { userAgent: request.headers['user-agent'], ip: request.ip, requestId: request.id })),
  );
}

/** RFC 8414 metadata, so a standard OAuth client finds the endpoints from the issuer alone. */
export function metadataRoute(app: App, publicUrl: string): void {
  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { auth: 'none', database: false, operationIdWhy: 'the metadata of RFC 8414, at its well-known path' },
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        tags: ['oauth'],
        summary: 'OAuth authorization server metadata (RFC 8414)',
        description: 'Where the token and device authorization endpoints are and which grants they take, for OAuth clients that discover them rather than hard-code them.',
        security: [],
        response: { 200: AuthorizationServerMetadata, ...errorResponses(422) },
      },
    },
    async () => ({
      issuer: publicUrl,
      device_authorization_endpoint: `${publicUrl}/v1/oauth/device_authorization`,
      token_endpoint: `${publicUrl}/v1/oauth/token`,
      grant_types_supported: [DEVICE_CODE_GRANT],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ['none'],
      service_documentation: `${publicUrl}/docs`,
    }),
  );
}
