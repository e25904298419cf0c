import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, patterned, UnixSeconds } from '../http/schemas.js';
import { DisplayName } from './packages/schemas.js';
import { Render, RenderStateSchema } from './renders/schemas.js';

const VersionRef = Type.Object({ id: Type.String(), semver: Type.String() }, { additionalProperties: false });
const Values = Type.Object({}, { additionalProperties: true, description: 'Free-form JSON object: the values the templates are rendered with' });
const BodyId = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

/** The spec's install fields, as the restore answers them. */
const specFields = {
  id: Type.String(),
  current_version: Type.Union([VersionRef, Type.Null()], { description: 'The version of the newest succeeded render; null before the first' }),
  desired_version: VersionRef,
  automatic_updates_enabled: Type.Boolean(),
  updated_at: UnixSeconds(),
  etag: Type.String(),
};

export const RestoredInstall = Type.Object(specFields, {
  title: 'RestoredInstall',
  additionalProperties: false,
  description: "The spec's install of the restore response (GET /v1/installs/{id} for the whole install)",
});

export const LastRender = Type.Union(
  [
    Type.Object(
      {
        id: Type.String(),
        state: RenderStateSchema,
        error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed (e.g. "config.yaml: no value for {{replicas}}"); null unless failed' }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The newest render of the install (its state as of now); null before the first' },
);

export const Delivery = Type.Union([Type.Literal('direct'), Type.Literal('change_request')], {
  description:
    '`direct`: a render moves `main` at once. `change_request`: every render after the first opens a repository change request and waits (`awaiting_merge`) until it is merged (docs/spec-gaps.md, "Repository change requests")',
});
export const RequiredApprovals = Type.Integer({ minimum: 0, maximum: 10, description: 'Approvals a change request needs before it can be merged (0-10)' });

export const Install = Type.Object(
  {
    ...specFields,
    workspace_id: Type.String(),
    name: Type.String(),
    package_id: Type.String(),
    values: Values,
    created_at: UnixSeconds(),
    last_render: LastRender,
    delivery: Delivery,
    required_approvals: RequiredApprovals,
    open_change_request_id: Type.Union([Type.String(), Type.Null()], { description: 'The open repository change request waiting for review before it reaches `main`; null when none waits' }),
    cluster_id: Type.Union([Type.String(), Type.Null()], { description: 'The cluster it is placed on (GET /v1/clusters/{id}); null: none' }),
  },
  { title: 'Install', additionalProperties: false },
);
export type Install = Static<typeof Install>;

export const InstallList = ListEnvelope(Install, 'Newest first');

export const CreateInstallBody = Type.Object(
  {
    name: DisplayName('Unique in the workspace, 1-100 characters'),
    package_id: BodyId('The package to install'),
    version_id: BodyId('A version of that package: the first desired version'),
    values: Type.Optional(Values),
    automatic_updates_enabled: Type.Optional(Type.Boolean({ default: false, description: 'Follow newer (non pre-release) versions of the package on their own' })),
    delivery: Type.Optional(Delivery),
    required_approvals: Type.Optional(RequiredApprovals),
    cluster_id: Type.Optional(Type.Union([BodyId('A cluster of the workspace to place it on (404, path `["body","cluster_id"]`)'), Type.Null()], { description: 'null or absent: on no cluster' })),
  },
  { title: 'CreateInstallBody', additionalProperties: false },
);
export type CreateInstallBody = Static<typeof CreateInstallBody>;

export const UpdateInstallBody = Type.Object(
  {
    desired_version_id: Type.Optional(BodyId('A version of the package of the install')),
    values: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Replaces the values as a whole' })),
    automatic_updates_enabled: Type.Optional(Type.Boolean()),
    delivery: Type.Optional(Delivery),
    required_approvals: Type.Optional(RequiredApprovals),
    cluster_id: Type.Optional(Type.Union([BodyId('A cluster of the workspace to move it to (404, path `["body","cluster_id"]`)'), Type.Null()], { description: 'null: on no cluster' })),
  },
  { title: 'UpdateInstallBody', additionalProperties: false },
);
export type UpdateInstallBody = Static<typeof UpdateInstallBody>;

export const RestoreBody = Type.Object(
  { render_id: Type.String({ minLength: 1, maxLength: 54, description: 'A succeeded render of this install, `rnd_<id>` or bare' }) },
  { title: 'RestoreBody', additionalProperties: false },
);

export const RestoreResponse = Type.Object({ install: RestoredInstall, render: Render }, { title: 'RestoreResponse', additionalProperties: false });

export const InstallParams = Type.Object({ id: PathId(55, 'Install id, `inst_<id>` or bare; length 1-55') });

export const ListInstallsQuery = PageQuery(100, 20, {
  cluster_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the installs placed on this cluster, `cl_<id>` or bare' })),
});

/** `GET /v1/installs/{id}/repository`: where the install's history is and how to fetch it. */
export const InstallRepository = Type.Object(
  {
    head_commit_sha: Type.Union([Type.String(patterned('^[0-9a-f]{40}$', '40 lower-case hexadecimal digits (a git commit id)', '3b18e512dba79e4c8300dd08aeb37f8e728b8dad')), Type.Null()], {
      description: 'The commit `main` points at (40 lower-case hex); null before the first commit',
    }),
    clone_url: Type.String({
      description: 'Absolute URL for `git clone` over HTTP (read-only): `<WSP_PUBLIC_URL>/v1/installs/<id>/repository.git`',
    }),
  },
  { title: 'InstallRepository', additionalProperties: false },
);
export type InstallRepository = Static<typeof InstallRepository>;

/** `GET /v1/renders/{id}/files`: the tree of the commit a render made, file by file. */
export const RenderFiles = Type.Object(
  {
    render_id: Type.String(),
    commit_sha: Type.String(patterned('^[0-9a-f]{40}$', '40 lower-case hexadecimal digits (a git commit id)', '3b18e512dba79e4c8300dd08aeb37f8e728b8dad')),
    files: Type.Array(
      Type.Object(
        {
          path: Type.String({ description: 'Relative path in the repository' }),
          size: Type.Integer({ minimum: 0, description: 'Bytes' }),
          content: Type.Union([Type.String(), Type.Null()], { description: 'The file as UTF-8 text; null when its bytes are not valid UTF-8' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Every file of the commit, in path order' },
    ),
  },
  { title: 'RenderFiles', additionalProperties: false },
);
export type RenderFiles = Static<typeof RenderFiles>;

export const GitInfoRefsQuery = Type.Object(
  {
    service: Type.Unsafe<'git-upload-pack' | 'git-receive-pack'>({
      type: 'string',
      enum: ['git-upload-pack', 'git-receive-pack'],
      description: 'Set by git: `git-upload-pack` (fetch, clone); `git-receive-pack` (push) is refused with 403',
    }),
  },
  { additionalProperties: false },
);

/** Set by git itself; passed to git only when it is exactly `version=0`, `1` or `2`, otherwise ignored (protocol v0). */
export const GitProtocolHeader = Type.Optional(Type.String({ maxLength: 256, description: 'Set by git (`version=2`): the protocol version it asks for' }));

/** The bytes git sends and receives: pkt-lines and packs, not JSON (held whole, or streamed). */
export const GitBytes = (description: string) => Type.Unsafe<Buffer | NodeJS.ReadableStream>({ type: 'string', format: 'binary', description });
