import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, UnixSeconds } from '../http/schemas.js';
import { BASE64_BYTES } from '../http/schemas.js';

/** docs/spec-gaps.md, "Secrets": at most 64 KiB of payload, decoded. */
export const MAX_PAYLOAD_BYTES = 65536;
/** The base64 length of MAX_PAYLOAD_BYTES: a bound for the document; the decoded size is `x-base64-bytes`'s. */
const MAX_PAYLOAD_BASE64 = Math.ceil(MAX_PAYLOAD_BYTES / 3) * 4;

export const Secret = Type.Object(
  {
    id: Type.String({ description: '`sec_<id>`' }),
    workspace_id: Type.String(),
    name: Type.String(),
    etag: Type.String({ description: 'Changes when a version is added; version state changes leave it alone' }),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds('When the secret or its set of versions last changed'),
  },
  { title: 'Secret', additionalProperties: false },
);
export type Secret = Static<typeof Secret>;

export const SecretList = ListEnvelope(Secret);

export const CreateSecretBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique in the workspace, 1-100 characters' }) },
  { title: 'CreateSecretBody', additionalProperties: false },
);
export type CreateSecretBody = Static<typeof CreateSecretBody>;

export const VersionState = Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('destroyed')]);

/** The spec's secret version; `comment` and `destroyed_at` are omitted when unset (docs/spec-gaps.md, "Conventions"). */
export const SecretVersion = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 55, description: '`secv_<id>`' }),
    secret_id: Type.String({ minLength: 1, maxLength: 54 }),
    version_number: Type.Integer({ minimum: 1, description: '1, 2, ... per secret' }),
    state: VersionState,
    created_at: UnixSeconds(),
    etag: Type.String(),
    comment: Type.Optional(Type.String({ maxLength: 200 })),
    destroyed_at: Type.Optional(UnixSeconds('Set when the version was destroyed')),
  },
  { title: 'SecretVersion', additionalProperties: false },
);
export type SecretVersion = Static<typeof SecretVersion>;

export const SecretVersionList = ListEnvelope(SecretVersion, 'Versions, newest (highest version_number) first');

export const AddVersionBody = Type.Object(
  {
    data: Type.String({
      maxLength: MAX_PAYLOAD_BASE64,
      contentEncoding: 'base64',
      // Checked by the body validator (src/http/validation.ts): the exact decoded size, strict base64.
      [BASE64_BYTES]: { min: 1, max: MAX_PAYLOAD_BYTES },
      description: 'The payload: padded standard base64 (RFC 4648 §4) of 1 to 65,536 bytes',
    }),
    comment: Type.Optional(Type.String({ maxLength: 200, description: 'At most 200 characters' })),
  },
  { title: 'AddVersionBody', additionalProperties: false },
);
export type AddVersionBody = Static<typeof AddVersionBody>;

export const AccessedVersion = Type.Object(
  {
    id: Type.String({ description: 'The version, `secv_<id>`' }),
    data: Type.String({ contentEncoding: 'base64', description: 'The payload, padded standard base64' }),
  },
  { title: 'AccessedVersion', additionalProperties: false },
);

export const ListQuery = PageQuery(100, 50);

export const SecretListQuery = PageQuery(100, 50, {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the secret with exactly this name (names are unique in a workspace): a list of one, or empty' })),
});

/** The version id that names a secret's newest enabled version (docs/spec-gaps.md, "Lifecycles"). */
export const LATEST_VERSION = 'latest';

const SecretId = PathId(54, 'Secret id, `sec_<id>` or bare; length 1-54');
export const SecretParams = Type.Object({ id: SecretId });
export const VersionParams = Type.Object({ id: SecretId, vid: PathId(55, 'Secret version id, `secv_<id>` or bare; length 1-55') });
/** Reads also take `latest`: the newest enabled version. */
export const ReadVersionParams = Type.Object({
  id: SecretId,
  vid: PathId(55, 'Secret version id, `secv_<id>` or bare (length 1-55), or `latest`: the newest enabled version'),
});
