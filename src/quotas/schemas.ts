import { Type } from '@sinclair/typebox';

const Counted = (description: string) =>
  Type.Object(
    {
      limit: Type.Integer({ minimum: 1, description: 'The quota (an operator setting)' }),
      used: Type.Integer({ minimum: 0, description: 'How much of it the workspace uses now' }),
    },
    { additionalProperties: false, description },
  );

export const WorkspaceQuotas = Type.Object(
  {
    renders_per_hour: Counted('Renders started in the last hour (WSP_QUOTA_RENDERS_PER_HOUR); over it, creating or updating an install answers 429 (7040) with Retry-After'),
    api_tokens: Counted('Live API tokens (WSP_QUOTA_API_TOKENS); at it, creating one answers 409 (7041)'),
    webhooks: Counted('Webhook endpoints (WSP_QUOTA_WEBHOOKS); at it, adding one answers 409 (7320)'),
    render_output_bytes: Type.Object(
      { limit: Type.Integer({ minimum: 1, description: 'Bytes' }) },
      { additionalProperties: false, description: "The most one render's files may hold together (WSP_QUOTA_RENDER_OUTPUT_BYTES); a larger render fails with a message saying so" },
    ),
    repository_bytes: Type.Object(
      {
        limit: Type.Integer({ minimum: 1, description: 'Bytes' }),
        used: Type.Integer({ minimum: 0, description: "The largest install's repository, as last measured (after its last render or repository maintenance); 0 without one" }),
        install_id: Type.Union([Type.String(), Type.Null()], { description: 'That install; null without one' }),
      },
      { additionalProperties: false, description: "The most one install's git repository may take on disk (WSP_QUOTA_REPOSITORY_BYTES); a render that would pass it fails" },
    ),
    workspace_repository_bytes: Type.Object(
      {
        limit: Type.Integer({ minimum: 1, description: 'Bytes' }),
        used: Type.Integer({
          minimum: 0,
          description:
            "What all the workspace's install repositories take together, each as last measured (after its last render or repository maintenance); it may pass the limit when maintenance measures what failed renders left, until it prunes them",
        }),
      },
      {
        additionalProperties: false,
        description:
          "The most all of the workspace's install repositories may take on disk together (WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES); a render that would pass it fails, and once they take it all, creating or updating an install answers 409 (7066)",
      },
    ),
    workspaces_per_user: Type.Object(
      {
        limit: Type.Integer({ minimum: 1, description: 'Workspaces one user may own (an operator setting)' }),
        used: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'How many workspaces the calling user owns; null for a workspace API token, which owns none and makes none' }),
      },
      { additionalProperties: false, description: 'Workspaces one user may own (WSP_WORKSPACES_PER_USER), a limit per user rather than per workspace; at it, creating one answers 409 (7065)' },
    ),
  },
  { title: 'WorkspaceQuotas', additionalProperties: false },
);
