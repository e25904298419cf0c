import { Type, type TSchema, type TObject, type TProperties } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorCodes } from '../shared/errors.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency.js';

/** The spec's error envelope: one shared component in the OpenAPI document. */
export const ErrorEntrySchema = Type.Object(
  {
    code: Type.Integer({ description: 'Stable machine-readable code; see docs/errors.md' }),
    message: Type.String(),
    path: Type.Optional(Type.Array(Type.String(), { description: 'Where the error is: ["body", ...], ["query", name], ["headers", name] or ["path", name]' })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false },
);

export const ErrorEnvelopeSchema = Type.Object(
  {
    _tag: Type.Optional(Type.Literal('Unauthorized', { description: 'Present only on the 401 of the notification endpoints' })),
    success: Type.Literal(false),
    errors: Type.Array(ErrorEntrySchema),
    result: Type.Object({}, { additionalProperties: false }),
  },
  { $id: 'ErrorEnvelope', additionalProperties: false, description: `Error codes: ${Object.values(ErrorCodes).map((c) => `${c.code} (${c.status})`).join(', ')}` },
);

const STATUS_TEXT: Record<number, string> = {
  401: 'Missing or invalid credential',
  403: 'Forbidden: no Service-Context for a broad credential, another workspace, or a missing role',
  404: 'Not found (code 7002)',
  405: 'Method not allowed',
  409: 'Conflict: If-Match differs from the current etag (metadata.current_etag), a state rule, or an Idempotency-Key in flight',
  413: 'Request body over 1 MiB',
  415: 'Request body is not application/json',
  422: 'Validation error: one entry per field, with its path',
  429: 'Too many requests (7007); see Retry-After',
  500: 'Internal error (7099); never a stack trace or SQL',
  503: 'Not ready',
};

const envelopeRef = (description: string) => Type.Ref('ErrorEnvelope', { description });

/** Error responses of a route, each the shared envelope: the operation's own. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = envelopeRef(STATUS_TEXT[s] ?? 'Error');
  return out;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The error statuses the request pipeline itself can answer on a route, whatever the route does:
 * - 422 on every route (every route validates at least its query string; src/http/validation.ts)
 *   and 500 (7099) on every route;
 * - 413 and 415 on every route that reads a body (POST, PUT, PATCH, DELETE: a body is parsed
 *   whether or not the route takes one);
 * - on authenticated routes 401, and 429 (failed authentications per address, always on, and
 *   WSP_RATE_LIMIT_PER_MINUTE per credential); 403 where a Service-Context or role is resolved
 *   (`config.scope`); 409 (7031, an Idempotency-Key still in flight) on every such write, since
 *   the pipeline takes an Idempotency-Key on every one.
 */
export function pipelineStatuses(methods: readonly string[], config: { auth?: string; scope?: string } | undefined): Map<number, string> {
  const out = new Map<number, string>();
  const writes = methods.some((m) => WRITE_METHODS.has(m));
  const authenticated = config?.auth !== 'none';
  if (authenticated) out.set(401, STATUS_TEXT[401]!);
  if (authenticated && config?.scope) out.set(403, STATUS_TEXT[403]!);
  if (authenticated && config?.scope && writes) out.set(409, 'An earlier request with this Idempotency-Key is still in progress (7031)');
  if (writes) {
    out.set(413, STATUS_TEXT[413]!);
    out.set(415, STATUS_TEXT[415]!);
  }
  out.set(422, STATUS_TEXT[422]!);
  if (authenticated) out.set(429, STATUS_TEXT[429]!);
  out.set(500, STATUS_TEXT[500]!);
  return out;
}

/**
 * Adds to every route's responses the error statuses the pipeline can answer on it
 * (`pipelineStatuses`), so the OpenAPI document lists every status a client can meet. A
 * status the route documents itself keeps its own description. Left alone: routes with an
 * error handler of their own (the OAuth endpoints answer in RFC 6749's format), routes hidden
 * from the document, and the reference page's assets.
 */
export function documentPipelineErrors(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    if (route.errorHandler || route.schema?.hide || route.url === '/docs' || route.url.startsWith('/docs/')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const response = { ...((route.schema?.response as Record<string, unknown> | undefined) ?? {}) };
    for (const [status, description] of pipelineStatuses(methods, route.config)) {
      if (!(String(status) in response)) response[status] = envelopeRef(description);
    }
    route.schema = { ...(route.schema ?? {}), response };
  });
}

export const NoContent = Type.Null({ description: 'No content' });

export function ListEnvelope<T extends TSchema>(item: T, description?: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      has_more: Type.Boolean({ description: 'true if more items exist after this page' }),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'opaque cursor for the next page; null when there are no more pages' }),
    },
    { additionalProperties: false, ...(description ? { description } : {}) },
  );
}

export const CursorQuery = Type.String({ minLength: 1, maxLength: 512, pattern: '^[A-Za-z0-9_-]+$', description: 'The next_cursor of a previous response' });

/**
 * The query of a list operation: `limit` (1 to `max`, `byDefault` when absent), `cursor`, and
 * the list's own filters; nothing else is accepted.
 */
export function PageQuery<Filters extends TProperties = {}>(max: number, byDefault: number, filters?: Filters) {
  const paging = {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: byDefault, description: `Items per page, 1-${max}; ${byDefault} when absent` })),
    cursor: Type.Optional(CursorQuery),
  };
  return Type.Object({ ...(filters as Filters), ...paging } as Filters & typeof paging, { additionalProperties: false });
}

/** A workspace id as sent (Service-Context, path): the schema below and the pipeline's own check share these. */
export const WORKSPACE_WIRE_ID_PATTERN = '^ws_[A-Za-z0-9]+$';
export const WORKSPACE_WIRE_ID_MAX_LENGTH = 53;

export const WorkspaceWireId = Type.String({
  minLength: 1,
  maxLength: WORKSPACE_WIRE_ID_MAX_LENGTH,
  pattern: WORKSPACE_WIRE_ID_PATTERN,
  description: `A workspace wire id \`ws_<id>\`, length 1-${WORKSPACE_WIRE_ID_MAX_LENGTH}`,
});

type HeaderRule = 'required' | 'optional' | 'none';

/** The spec's common request headers, validated like any other input (422 with ["headers", name]). */
export function requestHeaders(opts: { ifMatch?: HeaderRule; idempotencyKey?: HeaderRule; serviceContext?: boolean } = {}): TObject<TProperties> {
  const props: TProperties = {};
  if (opts.serviceContext !== false) {
    props['service-context'] = Type.Optional(WorkspaceWireId);
  }
  const ifMatch = Type.String({ minLength: 1, maxLength: 256, description: 'The etag of the resource version last read (quoted or bare, or *)' });
  if (opts.ifMatch === 'required') props['if-match'] = ifMatch;
  else if (opts.ifMatch === 'optional') props['if-match'] = Type.Optional(ifMatch);
  const key = Type.String({
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
    description: 'Caller-chosen key; a retry with the same key replays the first response (24 h)',
  });
  if (opts.idempotencyKey === 'required') props['idempotency-key'] = key;
  else if (opts.idempotencyKey === 'optional') props['idempotency-key'] = Type.Optional(key);
  return Type.Object(props);
}

export function PathId(maxLength: number, description: string) {
  return Type.String({ minLength: 1, maxLength, description });
}

export const UnixSeconds = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });
