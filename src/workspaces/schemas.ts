import { Type } from '@sinclair/typebox';
import { ListEnvelope, PathId, UnixSeconds } from '../http/schemas.js';

export const Workspace = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer'), Type.Null()], {
      description: "The caller's role; null for a workspace API token",
    }),
    etag: Type.String(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'Workspace', additionalProperties: false },
);

export const WorkspaceList = ListEnvelope(Workspace);

export const WorkspaceParams = Type.Object({ id: PathId(53, 'Workspace id, `ws_<id>` or bare; length 1-53') });

export const UpdateWorkspaceBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { title: 'UpdateWorkspaceBody', additionalProperties: false });

export const CreateWorkspaceBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { title: 'CreateWorkspaceBody', additionalProperties: false });

const RoleName = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')]);

export const Member = Type.Object(
  {
    user_id: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()]),
    role: RoleName,
    joined_at: UnixSeconds(),
  },
  { title: 'Member', additionalProperties: false },
);

export const MemberList = ListEnvelope(Member, 'By user id');

export const MemberParams = Type.Object({
  id: PathId(53, 'Workspace id, `ws_<id>` or bare; length 1-53'),
  user_id: PathId(64, 'User id, `usr_<id>` or bare'),
});

export const ChangeRoleBody = Type.Object({ role: RoleName }, { title: 'ChangeRoleBody', additionalProperties: false });
