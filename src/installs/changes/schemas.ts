import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, patterned, UnixSeconds } from '../../http/schemas.js';

const Sha = (description: string) => Type.String({ ...patterned('^[0-9a-f]{40}$', '40 lower-case hexadecimal digits (a git commit id)', '3b18e512dba79e4c8300dd08aeb37f8e728b8dad'), description });
const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const nullableTime = (description: string) => Type.Union([UnixSeconds(), Type.Null()], { description });

export const ChangeRequestState = Type.Union([Type.Literal('open'), Type.Literal('merged'), Type.Literal('closed'), Type.Literal('superseded')], {
  description: '`open` (waits for a merge), `merged` (its head is on `main`), `closed` (closed unmerged; `:reopen` while no newer render exists), `superseded` (a newer render of the install)',
});

export const MergeBlocker = Type.Union([Type.Literal('approvals_required'), Type.Literal('not_open')], {
  description: "`approvals_required`: fewer approvals than the install's `required_approvals`; `not_open`: the change request is not open",
});

/** docs/spec-gaps.md, "Repository change requests": the repository change request, every field always present. */
export const ChangeRequest = Type.Object(
  {
    id: Type.String({ description: '`rcr_<id>`' }),
    workspace_id: Type.String(),
    install_id: Type.String({ description: 'The install whose `main` the change request would move' }),
    number: Type.Integer({ minimum: 1, description: '1, 2, 3... per install' }),
    title: Type.String({ description: 'Words naming the change unless edited ("Update app to 1.3.0", "Restore render rnd_...")' }),
    description: Type.String({ description: 'Free text; empty unless edited' }),
    state: ChangeRequestState,
    render_id: Type.String({ description: 'The render whose tree this change request carries' }),
    author_id: nullableString("The user or API token whose request caused the render; null for the platform's automatic updates"),
    base_commit_sha: Sha('The `main` head the head commit is built on (a moved `main` re-parents an open change request: a new head commit, same tree)'),
    head_commit_sha: Sha('The commit a merge moves `main` to, also `ref`'),
    ref: Type.String({ description: "`refs/changes/<number>`: advertised by the install's git endpoint (`git fetch origin refs/changes/3`), kept after the change request ends" }),
    mergeable: Type.Boolean({ description: 'Computed when read, never null: true exactly when `merge_blockers` is empty' }),
    merge_blockers: Type.Array(MergeBlocker, { description: 'Every reason `mergeable` is false, not only the first' }),
    approvals: Type.Array(Type.Object({ user_id: Type.String({ description: 'The member who approved' }), approved_at: UnixSeconds('When') }, { additionalProperties: false }), {
      description: 'Oldest first; one per person',
    }),
    diff_stats: Type.Object(
      {
        added: Type.Integer({ minimum: 0, description: 'Files only the head has' }),
        modified: Type.Integer({ minimum: 0, description: 'Files whose bytes differ' }),
        removed: Type.Integer({ minimum: 0, description: 'Files only the base has' }),
      },
      { additionalProperties: false, description: 'Files added, modified and removed between the base and the head' },
    ),
    merged_by: nullableString('Who merged it (a user or an API token); null unless merged'),
    merged_at: nullableTime('When it was merged; null unless merged'),
    closed_at: nullableTime('When it was closed; null unless closed'),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
    etag: Type.String(),
  },
  {
    title: 'RepositoryChangeRequest',
    additionalProperties: false,
  },
);
export type ChangeRequest = Static<typeof ChangeRequest>;

export const ChangeRequestList = ListEnvelope(ChangeRequest, 'Newest first');

export const ChangeRequestParams = Type.Object({ id: PathId(54, 'Change request id, `rcr_<id>` or bare; length 1-54') });

export const ListChangeRequestsQuery = PageQuery(100, 20, {
  install_id: Type.Optional(Type.String({ minLength: 1, maxLength: 55, description: "Only this install's change requests (`inst_<id>` or bare)" })),
  state: Type.Optional(ChangeRequestState),
});

export const UpdateChangeRequestBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '1-200 characters' })),
    description: Type.Optional(Type.String({ maxLength: 10_000, description: 'At most 10,000 characters' })),
  },
  { title: 'UpdateChangeRequestBody', additionalProperties: false, examples: [{ title: 'Update app to 1.3.0 (reviewed by ops)' }] },
);
export type UpdateChangeRequestBody = Static<typeof UpdateChangeRequestBody>;

export const MergeChangeRequestBody = Type.Object(
  { head_commit_sha: Type.Optional(Sha('The head the caller reviewed: the merge is refused (409, 7332) unless it is still the head')) },
  { title: 'MergeChangeRequestBody', additionalProperties: false, examples: [{ head_commit_sha: '9c1f0e7a4b2d8e6f5a3c1b0d9e8f7a6b5c4d3e2f' }] },
);
export type MergeChangeRequestBody = Static<typeof MergeChangeRequestBody>;

export const ChangeRequestDiff = Type.Object(
  {
    files: Type.Array(
      Type.Object(
        {
          path: Type.String({ description: 'Relative path in the repository' }),
          status: Type.Union([Type.Literal('added'), Type.Literal('modified'), Type.Literal('removed')], {
            description: '`added` (only the head has it), `modified`, `removed` (only the base has it)',
          }),
          before: nullableString("The base's text; null where the file is absent there or is not UTF-8"),
          after: nullableString("The head's text; null where the file is absent there or is not UTF-8"),
        },
        { additionalProperties: false },
      ),
      { description: 'The files that differ between the base and the head, in path order' },
    ),
  },
  {
    title: 'RepositoryChangeRequestDiff',
    additionalProperties: false,
    examples: [{ files: [{ path: 'deploy/app.yaml', status: 'modified', before: 'replicas: 2\n', after: 'replicas: 3\n' }] }],
  },
);
export type ChangeRequestDiff = Static<typeof ChangeRequestDiff>;
