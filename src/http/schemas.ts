import { Type, type Static, type TObject, type TOptional, type TProperties, type TSchema, type TString } from '@sinclair/typebox';

/** The bounds of an Idempotency-Key header (docs/spec-gaps.md, "Conventions": an empty or over-long one is 422). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 64;

/**
 * `'x-base64-bytes': {min, max}` on a string: padded standard base64 (Node's decoder would
 * silently skip what it does not understand) of `min` to `max` decoded bytes. A length bound
 * alone cannot say this: 65,536 and 65,537 bytes both take 87,384 characters.
 */
export const BASE64_BYTES = 'x-base64-bytes';
import { patterned } from '../shared/pattern-schemas.js';
export { PATTERN_WORDS, patterned } from '../shared/pattern-schemas.js';

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
  // Its description (the list of codes) is added with the error table, by src/http/openapi.ts.
  { $id: 'ErrorEnvelope', additionalProperties: false },
);

export const STATUS_TEXT: Record<number, string> = {
  401: 'Missing or invalid credential',
  403: 'Forbidden: no Service-Context for a broad credential, another workspace, or a missing role',
  404: 'Not found (code 7002)',
  405: 'Method not allowed',
  406: 'Not acceptable (7026): the Accept header does not include the media type the route answers',
  409: 'Conflict: If-Match differs from the current etag (metadata.current_etag), a state rule, or an Idempotency-Key in flight',
  413: 'Request body over 1 MiB',
  415: 'Request body is not application/json',
  422: 'Validation error: one entry per field, with its path',
  429: 'Too many requests (7007); see Retry-After',
  500: 'Internal error (7099); never a stack trace or SQL',
  503: 'Not ready',
  507: "Insufficient storage (7057): the server's disk is full; nothing was changed",
};

export const envelopeRef = (description: string) => Type.Ref('ErrorEnvelope', { description });

/** Error responses of a route, each the shared envelope: the operation's own. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = envelopeRef(STATUS_TEXT[s] ?? 'Error');
  return out;
}

export const NoContent = Type.Null({ description: 'No content' });

export function ListEnvelope<T extends TSchema>(item: T, description?: string) {
  return Type.Object(
    {
      data: Type.Array(item, { description: "This page's items, in the list's order" }),
      has_more: Type.Boolean({ description: 'true if more items exist after this page' }),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'opaque cursor for the next page; null when there are no more pages' }),
    },
    { additionalProperties: false, ...(description ? { description } : {}) },
  );
}

export const CursorQuery = Type.String({
  minLength: 1,
  maxLength: 512,
  ...patterned('^[A-Za-z0-9_-]+$', 'the next_cursor of a previous page, as it was sent (letters, digits, _ and -)', 'eyJrIjoiMDFKRDNWNVE2WSJ9'),
  description: 'The next_cursor of a previous response',
});

/**
 * The query of a list operation: `limit` (1 to `max`, `byDefault` when absent), `cursor`, and
 * the list's own filters; nothing else is accepted. The default is given here and only here:
 * the query validator (`useDefaults`) fills it in before any handler runs, so the handler's type
 * has `limit` as a number (the JSON schema, and so the OpenAPI document, keeps it optional).
 */
export function PageQuery<Filters extends TProperties = {}>(max: number, byDefault: number, filters?: Filters) {
  const paging = {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: byDefault, description: `Items per page, 1-${max}; ${byDefault} when absent` })),
    cursor: Type.Optional(CursorQuery),
  };
  const schema = Type.Object({ ...(filters as Filters), ...paging }, { additionalProperties: false });
  return Type.Unsafe<Omit<Static<typeof schema>, 'limit'> & { limit: number }>(schema);
}

/** A workspace id as sent (Service-Context, path): the schema below and the pipeline's own check share these. */
export const WORKSPACE_WIRE_ID_PATTERN = '^ws_[A-Za-z0-9]+$';
export const WORKSPACE_WIRE_ID_MAX_LENGTH = 53;

export const WorkspaceWireId = Type.String({
  minLength: 1,
  maxLength: WORKSPACE_WIRE_ID_MAX_LENGTH,
  ...patterned(WORKSPACE_WIRE_ID_PATTERN, 'a workspace id: ws_ followed by letters and digits, as GET /v1/workspaces lists it', 'ws_01JD3V5Q6Y7Z8A9B0C1D2E3F4G'),
  description: `A workspace wire id \`ws_<id>\`, length 1-${WORKSPACE_WIRE_ID_MAX_LENGTH}`,
});

type HeaderRule = 'required' | 'optional' | 'none';

interface HeaderOptions {
  ifMatch?: HeaderRule;
  idempotencyKey?: HeaderRule;
  serviceContext?: boolean;
}

/** A header as the rule says: required, optional, or not declared at all. */
type Declared<Name extends string, R, S extends TSchema> = R extends 'required' ? { [K in Name]: S } : R extends 'optional' ? { [K in Name]: TOptional<S> } : {};

/** The properties `requestHeaders(opts)` declares, so a route's `request.headers` has their types. */
export type RequestHeaderProperties<O extends HeaderOptions> = (O['serviceContext'] extends false ? {} : { 'service-context': TOptional<TString> }) &
  Declared<'if-match', O['ifMatch'], TString> &
  Declared<'idempotency-key', O['idempotencyKey'], TString>;

/**
 * The spec's common request headers, validated like any other input (422 with ["headers", name]).
 * Typed by what it declares: a route with `ifMatch: 'required'` reads `request.headers['if-match']`
 * as a string.
 */
export function requestHeaders<const O extends HeaderOptions = {}>(opts: O = {} as O): TObject<RequestHeaderProperties<O>> {
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
  return Type.Object(props) as TObject<RequestHeaderProperties<O>>;
}

export function PathId(maxLength: number, description: string) {
  return Type.String({ minLength: 1, maxLength, description });
}

export const UnixSeconds = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });
