import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, UnixSeconds } from '../http/schemas.js';
import { TOKEN_SCOPES, type TokenScope } from '../auth/scope-schemas.js';

/** Year 9999: an `expires_at` beyond it is almost surely milliseconds, which the API never takes. */
export const MAX_UNIX_SECONDS = 253402300799;

export const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'A label for the token, 1-100 characters' }),
    expires_at: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS }), Type.Null()], {
        description: 'Unix seconds, in the future; absent or null: never expires',
      }),
    ),
    scopes: Type.Optional(
      Type.Array(Type.Unsafe<TokenScope>({ type: 'string', enum: [...TOKEN_SCOPES] }), {
        uniqueItems: true,
        maxItems: TOKEN_SCOPES.length,
        description:
          'What the token may do; absent: everything. `:write` implies `:read` of its area; `secrets:access` (reading payloads) is never implied. An empty list allows only what needs no scope (the workspace, operations, quotas).',
      }),
    ),
  },
  { title: 'CreateTokenBody', additionalProperties: false },
);
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const CreatedToken = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    token: Type.String({ description: 'sk_svc_ token; returned only here, never again' }),
    expires_at: Type.Union([UnixSeconds(), Type.Null()]),
  },
  { title: 'CreatedToken', additionalProperties: false },
);

export const ListedToken = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first 12 characters of the token' }),
    expires_at: Type.Union([UnixSeconds(), Type.Null()]),
    created_at: UnixSeconds(),
    created_by: Type.String({ description: 'The user (or workspace API token) that created it' }),
    last_used_at: Type.Union([UnixSeconds(), Type.Null()], { description: 'Updated at most once a minute' }),
    scopes: Type.Array(Type.String(), { description: 'Its scopes; every one for a token made without `scopes`' }),
  },
  { title: 'ListedToken', additionalProperties: false },
);
export type ListedToken = Static<typeof ListedToken>;

export const TokenList = ListEnvelope(ListedToken);

export const ListTokensQuery = PageQuery(100, 50);

export const TokenIdParams = Type.Object({ id: PathId(64, 'API token id, `tok_<id>` or bare') });
