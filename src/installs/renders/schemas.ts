import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, patterned, UnixSeconds } from '../../http/schemas.js';

const nullable = <T extends ReturnType<typeof Type.String>>(s: T, description: string) => Type.Union([s, Type.Null()], { description });

/** docs/spec-gaps.md, "Packages, installs, renders" and "Repository change requests": `awaiting_merge` waits on a change request, `canceled` is one that was closed. */
export const RenderStateSchema = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('superseded'),
  Type.Literal('awaiting_merge'),
  Type.Literal('canceled'),
]);

/** The spec's render, every field always present (docs/spec-gaps.md, "Conventions": null where it does not apply). */
export const Render = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    install_id: Type.String(),
    render_hash: nullable(
      Type.String(patterned('^[0-9a-f]{64}$', '64 lower-case hexadecimal digits (a SHA-256)', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08')),
      'SHA-256 of the rendered tree (see docs/spec-gaps.md); null until rendered',
    ),
    state: RenderStateSchema,
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
    operation_id: Type.String({ description: 'The operation that completes this render: GET /v1/operations/{id}' }),
    repository_change_request_id: nullable(Type.String(), 'The repository change request carrying this render (an install whose `delivery` is `change_request`); null when it went to `main` directly'),
    commit_sha: nullable(
      Type.String(patterned('^[0-9a-f]{40}$', '40 lower-case hexadecimal digits (a git commit id)', '3b18e512dba79e4c8300dd08aeb37f8e728b8dad')),
      'The commit on `main` holding the rendered tree; null until committed (a render awaiting a merge: null, its change request has the head commit)',
    ),
    package_version_id: Type.String(),
    restored_from_render_id: nullable(Type.String(), 'The render a restore copied; null for other renders'),
    message: Type.String({ description: 'What happened: the commit subject, the failure, or the state in words' }),
  },
  { title: 'Render', additionalProperties: false },
);
export type Render = Static<typeof Render>;

export const RenderList = ListEnvelope(Render, 'Newest first');

export const RenderParams = Type.Object({ id: PathId(54, 'Render id, `rnd_<id>` or bare; length 1-54') });

export const ListRendersQuery = PageQuery(100, 20);
