import { Type, type Static } from '@sinclair/typebox';
import { patterned, UnixSeconds } from '../http/schemas.js';

/** The schema's pattern for a typed code: 8 letters, any case, an optional dash or space in the middle. */
export const TYPED_USER_CODE_PATTERN = '^ *[A-Za-z]{4}[- ]?[A-Za-z]{4} *$';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 6749 §5.2 and RFC 8628 §3.5: every error the two OAuth endpoints answer (and §4.1.2.1's temporarily_unavailable, 503). */
export const OAUTH_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'invalid_scope',
  'unsupported_grant_type',
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
  'server_error',
  'temporarily_unavailable',
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERRORS)[number];

export const OAuthErrorResponse = Type.Object(
  {
    error: Type.Union(OAUTH_ERRORS.map((e) => Type.Literal(e))),
    error_description: Type.String(),
  },
  { title: 'OAuthErrorResponse', additionalProperties: false, description: 'RFC 6749 §5.2 error (not the envelope), always with Cache-Control: no-store' },
);

const ClientId = Type.String({ minLength: 1, maxLength: 64, description: '`wsp-cli`, or one of WSP_OAUTH_CLIENT_IDS' });

// RFC 6749 §3.1: unrecognized request parameters are ignored, so these bodies allow extra properties.
export const DeviceAuthorizationBody = Type.Object(
  {
    client_id: ClientId,
    scope: Type.Optional(Type.String({ maxLength: 1000, description: 'No scopes are defined: absent or empty, else invalid_scope' })),
  },
  { title: 'DeviceAuthorizationBody' },
);
export type DeviceAuthorizationBody = Static<typeof DeviceAuthorizationBody>;

export const DeviceAuthorizationResponse = Type.Object(
  {
    device_code: Type.String({ description: 'Secret of the polling client; sent only here, stored as SHA-256' }),
    user_code: Type.String({
      ...patterned('^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$', 'eight consonants in two groups of four, such as WDJB-MJHT', 'WDJB-MJHT'),
      description: 'What the person types at verification_uri',
    }),
    verification_uri: Type.String({ description: 'WSP_PUBLIC_URL + /device' }),
    verification_uri_complete: Type.String({ description: 'verification_uri with the user code filled in' }),
    expires_in: Type.Integer({ description: 'Seconds: 900' }),
    interval: Type.Integer({ description: 'Seconds to wait between polls: 5' }),
  },
  { title: 'DeviceAuthorizationResponse', additionalProperties: false },
);
export type DeviceAuthorizationResponse = Static<typeof DeviceAuthorizationResponse>;

export const TokenBody = Type.Object(
  {
    grant_type: Type.String({ minLength: 1, maxLength: 200, description: `Only \`${DEVICE_CODE_GRANT}\`` }),
    client_id: ClientId,
    device_code: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { title: 'TokenBody' },
);
export type TokenBody = Static<typeof TokenBody>;

export const TokenResponse = Type.Object(
  {
    access_token: Type.String({ description: 'A new session token (acts as the approving user)' }),
    token_type: Type.Literal('Bearer'),
  },
  { title: 'TokenResponse', additionalProperties: false },
);
export type TokenResponse = Static<typeof TokenResponse>;

export const DecisionBody = Type.Object(
  {
    user_code: Type.String({
      ...patterned(TYPED_USER_CODE_PATTERN, 'the code the device shows: eight letters such as WDJB-MJHT, in any case, with or without the dash', 'WDJB-MJHT'),
      description: 'The code the device shows, in any case, with or without the dash',
    }),
  },
  { title: 'DecisionBody', additionalProperties: false },
);

export const DeviceLogin = Type.Object(
  {
    id: Type.String({ description: '`dev_<id>`' }),
    client_id: Type.String(),
    user_code: Type.String({ description: 'As shown: XXXX-XXXX' }),
    state: Type.Union([Type.Literal('approved'), Type.Literal('denied')]),
    created_at: UnixSeconds(),
    decided_at: UnixSeconds(),
    expires_at: UnixSeconds('The device must redeem an approval before this'),
  },
  { title: 'DeviceLogin', additionalProperties: false, description: 'A device login, as just approved or denied' },
);
export type DeviceLogin = Static<typeof DeviceLogin>;

export const AuthorizationServerMetadata = Type.Object(
  {
    issuer: Type.String(),
    device_authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    grant_types_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String(), { description: 'Empty: there is no authorization endpoint' }),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    service_documentation: Type.String(),
  },
  { title: 'AuthorizationServerMetadata', additionalProperties: false, description: 'RFC 8414 authorization server metadata' },
);
