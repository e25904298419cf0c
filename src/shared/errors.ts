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
  HEADERS_TOO_LARGE: { code: 7008, status: 431, message: 'The request headers are larger than the server accepts (16 KiB)' },
  BAD_REQUEST: { code: 7009, status: 400, message: 'The request is not valid HTTP' },
  REQUEST_TIMEOUT: { code: 7036, status: 408, message: 'The request was not received in time' },
  UNAUTHORIZED: { code: 7010, status: 401, message: 'A valid bearer credential is required' },
  FORBIDDEN: { code: 7020, status: 403, message: 'The credential may not do this' },
  SERVICE_CONTEXT_REQUIRED: {
    code: 7021,
    status: 403,
    message: 'This operation acts in one workspace and a session does not say which: send the header Service-Context: ws_<id> naming a workspace you belong to (GET /v1/workspaces lists them)',
  },
  WORKSPACE_FORBIDDEN: { code: 7022, status: 403, message: 'The credential may not act in the workspace named by Service-Context' },
  ROLE_REQUIRED: { code: 7023, status: 403, message: 'This operation needs a workspace role the caller does not have' },
  USER_REQUIRED: { code: 7024, status: 403, message: 'This operation acts for a user; a workspace API token has none' },
  SCOPE_REQUIRED: { code: 7025, status: 403, message: 'The API token lacks the scope this operation needs' },
  VIEWER_READ_ONLY: { code: 7027, status: 403, message: 'A viewer reads and writes nothing: this needs the role member, admin or owner' },
  NOT_ACCEPTABLE: { code: 7026, status: 406, message: 'This answer is only given as the media type the route names: send an Accept header that includes it' },
  ETAG_MISMATCH: { code: 7030, status: 409, message: 'If-Match does not equal the current etag' },
  IDEMPOTENCY_IN_FLIGHT: { code: 7031, status: 409, message: 'A request with this Idempotency-Key is still in progress' },
  IDEMPOTENCY_ANSWER_LOST: {
    code: 7055,
    status: 409,
    message: 'The request with this Idempotency-Key took effect, but its answer was lost to a failure; it is not repeated: read the resource to see its state',
  },
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
  DASHBOARD_SNIPPET_MISSING: { code: 7100, status: 409, message: 'A snippet the revision uses was deleted: the restore is blocked' },
  SNIPPET_ETAG_STALE: { code: 7101, status: 409, message: "The widget's snippet_etag is not the snippet's current etag" },
  SNIPPET_ARCHIVED: { code: 7102, status: 409, message: 'The snippet is archived: unarchive it before a widget pins it' },
  DASHBOARD_NOT_RESETTABLE: { code: 7103, status: 409, message: 'Only a workspace_overview dashboard has a default layout to reset to' },
  DUPLICATE_WIDGET_ID: { code: 7104, status: 422, message: 'Two widgets of the dashboard have the same widget_id' },
  DUPLICATE_FILTER_KEY: { code: 7105, status: 422, message: 'Two filter definitions of the dashboard have the same key' },
  SECRET_NAME_TAKEN: { code: 7200, status: 409, message: 'The workspace already has a secret with this name' },
  SECRET_VERSION_NOT_ENABLED: { code: 7201, status: 409, message: 'Only an enabled secret version can be accessed' },
  SECRET_VERSION_DESTROYED: { code: 7202, status: 409, message: 'The secret version is destroyed; destroyed is final' },
  SECRET_DATA_CORRUPT: { code: 7203, status: 500, message: 'The stored secret failed authentication (corrupt or tampered); it was not returned' },
  MASTER_KEY_UNAVAILABLE: { code: 7204, status: 500, message: "The secret's data key is wrapped by a master key this server is not configured with" },
  COMPUTE_CONFIG_IN_USE: { code: 7400, status: 409, message: 'Machines still use this compute config: delete them first' },
  MACHINE_NOT_RUNNING: { code: 7401, status: 409, message: 'Only a running machine can be suspended' },
  SUSPENSION_NOT_ACTIVE: { code: 7402, status: 409, message: 'The suspension is already being resumed' },
  PROVIDER_ACCOUNT_UNUSABLE: { code: 7403, status: 409, message: "The compute config's secret has no enabled version to use as the provider token" },
  PROVIDER_UNAVAILABLE: { code: 7404, status: 503, message: 'The compute provider is unreachable, timing out or rate limiting; retry later' },
  PROVIDER_REJECTED: { code: 7405, status: 422, message: 'The compute provider refused the request' },
  PROVIDER_ACTION_FAILED: { code: 7406, status: 502, message: 'A compute provider action ended in error' },
  PROVIDER_ACTION_TIMEOUT: { code: 7407, status: 504, message: 'The compute provider did not finish an action (a snapshot, a server) in time' },
  MACHINE_BUSY: { code: 7408, status: 409, message: 'The machine is being changed by an operation that has not finished' },
  MACHINE_NOT_SUSPENDED: { code: 7409, status: 409, message: 'Only a suspended machine can be resumed' },
  CLUSTER_NAME_TAKEN: { code: 7410, status: 409, message: 'Another cluster of the workspace has this name' },
  CLUSTER_IS_DEFAULT: { code: 7411, status: 409, message: "The workspace's default cluster cannot be deleted or renamed" },
  CLUSTER_NOT_EMPTY: { code: 7412, status: 409, message: 'The cluster still holds machines or installs: delete or move them first' },
  PACKAGE_NAME_TAKEN: { code: 7300, status: 409, message: 'The workspace already has a package with this name' },
  PACKAGE_VERSION_EXISTS: { code: 7301, status: 409, message: 'The package already has a version with this semver; versions are immutable' },
  INSTALL_NAME_TAKEN: { code: 7302, status: 409, message: 'The workspace already has an install with this name' },
  VERSION_OF_OTHER_PACKAGE: { code: 7303, status: 422, message: 'The version belongs to another package' },
  RENDER_OF_OTHER_PACKAGE: { code: 7304, status: 422, message: 'The render is of another package; it can never apply to this install' },
  RENDER_NOT_SUCCEEDED: { code: 7305, status: 409, message: 'Only a succeeded render can be restored' },
  TEMPLATE_INVALID: { code: 7306, status: 422, message: 'The template is not a valid Mustache template' },
  FILE_PATH_INVALID: { code: 7307, status: 422, message: 'The file path is not a valid relative path' },
  PACKAGE_IN_USE: { code: 7308, status: 409, message: 'Installs use the package: delete them first (metadata.install_ids names them)' },
  RENDER_FAILED: { code: 7310, status: 422, message: 'The render failed (a template or its values); an operation error, never an HTTP response' },
  JOB_FAILED: { code: 7399, status: 500, message: 'The job failed; the server log has the details under its job id' },
  RESTORE_VERIFICATION_FAILED: { code: 7311, status: 500, message: "The restored commit does not hold the restored render's tree; an operation error" },
  STREAMS_PER_USER_LIMITED: {
    code: 7500,
    status: 429,
    message: 'The user already has as many notification streams open on this server as it allows (WSP_STREAMS_PER_USER): close one, or retry after Retry-After seconds',
  },
  STREAMS_PER_PROCESS_LIMITED: { code: 7501, status: 429, message: 'This server already serves as many notification streams as it allows (WSP_STREAMS_PER_PROCESS): retry after Retry-After seconds' },
  USER_CODE_UNKNOWN: { code: 7600, status: 404, message: 'No pending device login has this user code (mistyped, or expired)' },
  USER_CODE_GUESSES_LIMITED: { code: 7601, status: 429, message: 'Too many wrong user codes; wait for Retry-After seconds' },
  DEVICE_LOGIN_DECIDED: { code: 7602, status: 409, message: 'This device login was already approved or denied' },
  INTERNAL: { code: 7099, status: 500, message: 'Internal error' },
  UNAVAILABLE: { code: 7098, status: 503, message: 'The service is not ready' },
  RENDER_QUOTA_EXCEEDED: { code: 7040, status: 429, message: 'The workspace has used its quota of renders for this hour (WSP_QUOTA_RENDERS_PER_HOUR); retry after Retry-After seconds' },
  CHANGE_REQUEST_NOT_OPEN: { code: 7330, status: 409, message: 'The change request is not open (metadata.state says what it is)' },
  CHANGE_REQUEST_NOT_MERGEABLE: { code: 7331, status: 409, message: 'The change request cannot be merged: metadata.merge_blockers lists every reason' },
  CHANGE_REQUEST_HEAD_MOVED: { code: 7332, status: 409, message: 'The head of the change request is no longer the head_commit_sha given (metadata.head_commit_sha is the head now)' },
  CHANGE_REQUEST_APPROVER_IS_AUTHOR: { code: 7333, status: 403, message: 'The author of a change request cannot approve it' },
  CHANGE_REQUEST_NEWER_RENDER: { code: 7334, status: 409, message: 'A newer render of the install exists: this change request can no longer be reopened (metadata.render_id names it)' },
  CHANGE_REQUEST_NOT_CLOSED: { code: 7335, status: 409, message: 'Only a closed change request can be reopened (metadata.state says what it is)' },
  BRANCH_BUSY: { code: 7337, status: 503, message: "Another writer holds the install's main branch at this instant; nothing was changed: retry after Retry-After seconds" },
  CHANGE_REQUEST_BRANCH_BUSY: { code: 7336, status: 409, message: "Another writer is moving the install's main branch right now: retry" },
  WEBHOOK_QUOTA_EXCEEDED: { code: 7320, status: 409, message: 'The workspace has as many webhooks as its quota allows (WSP_QUOTA_WEBHOOKS); delete one first' },
  WEBHOOK_DISABLED: { code: 7321, status: 409, message: 'The webhook is disabled: enable it (PATCH with {"enabled": true}) before retrying deliveries' },
  TOKEN_QUOTA_EXCEEDED: { code: 7041, status: 409, message: 'The workspace holds as many API tokens as its quota allows (WSP_QUOTA_API_TOKENS); revoke one first' },
  CSRF_REJECTED: { code: 7042, status: 403, message: 'A write made with the session cookie needs X-CSRF-Token and, when sent, this server as its Origin' },
  LAST_OWNER: { code: 7043, status: 409, message: 'The workspace must keep an owner: make another member owner first' },
  SIGN_IN_FAILED: { code: 7044, status: 401, message: 'The email or password is wrong' },
  SIGN_IN_LIMITED: { code: 7045, status: 429, message: 'Too many failed sign-ins; retry after Retry-After seconds' },
  SIGN_IN_BUSY: { code: 7067, status: 429, message: 'Too many sign-ins from this address are being checked at once; retry after Retry-After seconds' },
  INVITATION_GONE: { code: 7046, status: 410, message: 'The invitation was used, revoked or has expired' },
  EMAIL_TAKEN: { code: 7047, status: 409, message: 'A user already has this email' },
  SETUP_DONE: { code: 7048, status: 410, message: 'The platform is set up already: sign in instead' },
  OWNER_REQUIRED: { code: 7049, status: 403, message: 'Only an owner grants or removes the owner role' },
  SIGN_IN_REFUSED: { code: 7051, status: 403, message: 'Single sign-on found no user for this account, and nobody invited its email' },
  OIDC_FAILED: { code: 7052, status: 400, message: 'Single sign-on failed; no session was made' },
  OIDC_STARTS_LIMITED: { code: 7060, status: 429, message: 'Too many single sign-ons were started from this address; retry after Retry-After seconds' },
  EMAIL_HELD_UNVERIFIED: { code: 7061, status: 409, message: 'An account that never proved it controls this address holds it' },
  OIDC_UNAVAILABLE: { code: 7053, status: 503, message: 'The OpenID provider cannot be reached right now' },
  DATABASE_UNAVAILABLE: { code: 7054, status: 503, message: 'The database cannot be reached right now; retry after Retry-After seconds' },
  INSUFFICIENT_STORAGE: { code: 7057, status: 507, message: "The server's disk is full: nothing was changed; retry once an operator has freed space" },
  WORKSPACE_LIMIT_REACHED: { code: 7065, status: 409, message: 'The user owns as many workspaces as one user may (WSP_WORKSPACES_PER_USER); hand one over or leave one first' },
  WORKSPACE_REPOSITORIES_FULL: { code: 7066, status: 409, message: "The workspace's repositories take its whole disk quota (WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES)" },
  REPOSITORY_UNAVAILABLE: { code: 7058, status: 503, message: "The installs' repository volume cannot be written right now; retry after Retry-After seconds" },
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
    // An ApiError is an answer, not a bug: capturing a stack for every 401 or 404 costs more
    // than the rest of the request. Internal errors keep theirs.
    const limit = Error.stackTraceLimit;
    if (def.status < 500) Error.stackTraceLimit = 0;
    super(opts.message ?? def.message);
    Error.stackTraceLimit = limit;
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

export const notFound = (what = 'resource', path?: string[]) => new ApiError('NOT_FOUND', { message: `The ${what} does not exist`, ...(path ? { path } : {}) });

export const validationError = (path: string[], message: string) => new ApiError('VALIDATION_FAILED', { message, path });

/**
 * A refusal of an operator command (`wsp admin ...`): printed as `error: <message>`, exit code 1.
 * Areas throw it from the functions the operator commands call (an import, a suspension).
 */
export class AdminError extends Error {}

export function envelope(entries: ErrorEntry[]) {
  return { success: false as const, errors: entries, result: {} };
}
