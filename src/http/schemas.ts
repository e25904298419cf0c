import { Type, type TSchema, type TObject, type TProperties } from '@sinclair/typebox';
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
  429: 'Too many requests; see Retry-After',
  503: 'Not ready',
};

/** Error responses of a route, each the shared envelope. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Ref('ErrorEnvelope', { description: STATUS_TEXT[s] ?? 'Error' });
  return out;
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
