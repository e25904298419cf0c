import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, patterned, UnixSeconds } from '../../http/schemas.js';

/**
 * `machine_type_filter` globs: `*` any run of characters, `?` one character, `[abc]`,
 * `[a-z]` and `[!x]` character classes; everything else literal. Matched against the
 * whole server type name, case-sensitively (provider type names are lower case).
 *
 * Matching never uses a regular expression: `*` as `.*` backtracks exponentially on
 * patterns such as `**********x`, and it runs on the server's only thread. The matcher
 * below is two pointers that backtrack only to the last `*` seen, so a match costs at most
 * (pattern length × name length) steps, whatever the pattern.
 */
export const GLOB_PATTERN = '^(?:[A-Za-z0-9._*?-]|\\[!?[A-Za-z0-9._-]+\\])+$';

/** The request of the spec's POST /compute/configs; `provider` accepts the one configured id. */
export function createComputeConfigBody(providerId: string) {
  return Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 100 }),
      provider: Type.Unsafe<string>({ type: 'string', enum: [providerId], description: `The infrastructure provider: \`${providerId}\`` }),
      region: Type.String({ minLength: 1, description: "One of the provider's locations, e.g. `fsn1`" }),
      image: Type.String({ minLength: 1, description: 'An image the provider offers, e.g. `ubuntu-24.04`' }),
      machine_type_filter: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          ...patterned(GLOB_PATTERN, 'a glob over server types such as cx* or cpx?1: letters, digits, . _ -, the wildcards * and ?, and sets such as [ab] or [!0-9]', 'cx*'),
          default: '*',
          description: "Glob over the provider's server types (`*`, `?`, `[a-z]`, `[!x]`), e.g. `cx*`; default `*`. It must match at least one type offered in the region.",
        }),
      ),
      secret_id: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 54,
          description: "Bring your own machine account: a secret of the workspace whose newest enabled version is the provider token. Omitted: the platform's account",
        }),
      ),
    },
    { additionalProperties: false },
  );
}
export type CreateComputeConfigBody = Static<ReturnType<typeof createComputeConfigBody>>;

export const CreatedComputeConfig = Type.Object({ id: Type.String({ description: '`cc_<id>`' }) }, { title: 'CreatedComputeConfig', additionalProperties: false, description: 'Config created' });

export const ComputeConfig = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    name: Type.String(),
    provider: Type.String(),
    region: Type.String(),
    image: Type.String(),
    machine_type_filter: Type.String(),
    secret_id: Type.Union([Type.String(), Type.Null()], { description: "null: the platform's provider account" }),
    etag: Type.String(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'ComputeConfig', additionalProperties: false },
);

export const ComputeConfigList = ListEnvelope(ComputeConfig);

export const ListComputeConfigsQuery = PageQuery(100, 50);

export const ComputeConfigParams = Type.Object({ id: PathId(64, 'Compute config id, `cc_<id>` or bare') });
