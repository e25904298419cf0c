/**
 * Every error code the API answers with, its HTTP status and default message.
 * docs/errors.md and the OpenAPI document list the same table; a test keeps them in step.
 */
export const ErrorCodes = {
  ROUTE_NOT_FOUND: { code: 7000, status: 404, message: 'No route matches this method and path' },
  METHOD_NOT_ALLOWED: { code: 7001, status: 405, message: 'The route exists but not for this method' },
  NOT_FOUND: { code: 7002, status: 404, message: 'The resource does not exist' },
  VALIDATION_FAILED: { code: 7003, status: 422, message: 'The request is not valid' },
  MALFORMED_JSON: { code: 7004, status: 422, message: 'The request body is not valid JSON' },
  BODY_TOO_LARGE: { code: 7005, status: 413, message: 'The request body is larger than 1 MiB' },
  UNSUPPORTED_MEDIA_TYPE: { code: 7006, status: 415, message: 'The request body must be application/json' },
  RATE_LIMITED: { code: 7007, status: 429, message: 'Too many requests' },
  UNAUTHORIZED: { code: 7010, status: 401, message: 'A valid bearer credential is required' },
  FORBIDDEN: { code: 7020, status: 403, message: 'The credential may not do this' },
  SERVICE_CONTEXT_REQUIRED: {
    code: 7021,
    status: 403,
    message: 'This credential acts for a user in several workspaces: name one with the Service-Context header',
  },
  WORKSPACE_FORBIDDEN: { code: 7022, status: 403, message: 'The credential may not act in the workspace named by Service-Context' },
  ROLE_REQUIRED: { code: 7023, status: 403, message: 'This operation needs a workspace role the caller does not have' },
  USER_REQUIRED: { code: 7024, status: 403, message: 'This operation acts for a user; a workspace API token has none' },
  ETAG_MISMATCH: { code: 7030, status: 409, message: 'If-Match does not equal the current etag' },
  IDEMPOTENCY_IN_FLIGHT: { code: 7031, status: 409, message: 'A request with this Idempotency-Key is still in progress' },
  IDEMPOTENCY_KEY_REUSED: {
    code: 7032,
    status: 422,
    message: 'This Idempotency-Key was used for a different request',
  },
  TOKEN_NOT_REPLAYED: {
    code: 7033,
    status: 409,
    message: 'The token was already created with this Idempotency-Key; its secret is shown only once',
  },
  STATE_CONFLICT: { code: 7034, status: 409, message: 'The resource is not in a state that allows this' },
  ALREADY_EXISTS: { code: 7035, status: 409, message: 'The resource already exists' },
  INTERNAL: { code: 7099, status: 500, message: 'Internal error' },
  UNAVAILABLE: { code: 7098, status: 503, message: 'The service is not ready' },
} as const;

export type ErrorName = keyof typeof ErrorCodes;

export interface ErrorEntry {
  code: number;
  message: string;
  path?: string[];
  metadata?: Record<string, string>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly entries: ErrorEntry[];
  readonly headers: Record<string, string>;

  constructor(name: ErrorName, opts: { message?: string; path?: string[]; metadata?: Record<string, string>; entries?: ErrorEntry[]; headers?: Record<string, string> } = {}) {
    const def = ErrorCodes[name];
    super(opts.message ?? def.message);
    this.status = def.status;
    this.headers = opts.headers ?? {};
    this.entries = opts.entries ?? [
      {
        code: def.code,
        message: opts.message ?? def.message,
        ...(opts.path ? { path: opts.path } : {}),
        ...(opts.metadata ? { metadata: opts.metadata } : {}),
      },
    ];
  }
}

export const notFound = (what = 'resource', path?: string[]) =>
  new ApiError('NOT_FOUND', { message: `The ${what} does not exist`, ...(path ? { path } : {}) });

export const validationError = (path: string[], message: string) =>
  new ApiError('VALIDATION_FAILED', { message, path });

export const stateConflict = (message: string, metadata?: Record<string, string>) =>
  new ApiError('STATE_CONFLICT', { message, ...(metadata ? { metadata } : {}) });

export function envelope(entries: ErrorEntry[]) {
  return { success: false as const, errors: entries, result: {} };
}
