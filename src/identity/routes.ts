import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { requestCtx } from '../http/context.js';
import { identity } from './service.js';
import { PERMISSION_NAMES, permissionsOfRole, permissionsOfToken } from '../auth/roles.js';

const RoleName = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')]);
const Permissions = Type.Array(Type.Union(PERMISSION_NAMES.map((p) => Type.Literal(p))), {
  description:
    'The guarded actions the caller may take there (docs/spec-gaps.md, "Roles (issue 50)"): `write` (any write at all; a viewer has none), `secrets.access` (read a payload), and the owner-or-admin actions (`secret_versions.destroy`, `secrets.delete`, `machines.delete`, `compute_configs.delete`, `installs.delete`, `packages.delete`, `webhooks.manage`, `webhooks.read`, `audit.read`, `members.manage`, `invitations.manage`, `invitations.read`, `api_tokens.manage`, `workspace.manage`). A user holds them by role, a workspace API token by its scopes. Show only the controls whose permission is here.',
});

const Me = Type.Object(
  {
    credential: Type.Object(
      {
        kind: Type.Union([Type.Literal('session'), Type.Literal('api_token'), Type.Literal('jwt')]),
        id: Type.String({ description: 'Session id, API token id, or the JWT subject' }),
      },
      { additionalProperties: false },
    ),
    user: Type.Union([
      Type.Object(
        {
          id: Type.String(),
          name: Type.Union([Type.String(), Type.Null()]),
          email: Type.Union([Type.String(), Type.Null()]),
          email_verified: Type.Boolean({
            description:
              'Whether anyone proved the user controls `email`: a provider vouched for it at single sign-on, or an operator did. An account made by accepting an invitation without signing in starts unproven: single sign-on never signs in to it by its address, and the proven owner of the address takes it (sign in with single sign-on while signed in to this account to prove it is yours).',
          }),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    workspace: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }), Type.Null()]),
    role: Type.Union([RoleName, Type.Null()]),
    permissions: Type.Union([Permissions, Type.Null()], { description: 'In `workspace`; null when the call names none' }),
    memberships: Type.Array(
      Type.Object(
        {
          workspace: Type.Object(
            { id: Type.String({ description: 'The workspace id' }), name: Type.String({ description: "The workspace's name" }) },
            { additionalProperties: false, description: 'The workspace of the membership' },
          ),
          role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')], { description: "The user's role there" }),
          permissions: Permissions,
        },
        { additionalProperties: false },
      ),
      { description: "Every workspace the user belongs to, with the user's role and permissions there; empty for a workspace API token" },
    ),
    csrf_token: Type.Optional(Type.String({ description: 'Only for a session sent as the wsp_session cookie: what its writes send as X-CSRF-Token' })),
  },
  { additionalProperties: false, description: 'Who the caller is. `workspace` is the one Service-Context names (or the token belongs to), else null.' },
);

export function identityRoutes(app: App, db: Kysely<DB>): void {
  app.get(
    '/me',
    {
      config: { scope: 'any', tokenScope: null, tokenScopeWhy: { tokens: 'open', why: "it describes only the calling credential (the token's id, its own workspace's id and name)" } },
      schema: {
        operationId: 'getMe',
        tags: ['identity'],
        summary: 'Who the caller is: user, workspace, role and permissions, memberships, credential kind',
        description:
          'The credential this request carries, described: the user (none for a workspace API token), the workspace it acts in and the role there, the kind of credential, and for a browser session the CSRF token its writes send.',
        headers: requestHeaders(),
        response: { 200: Me, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => {
      const ctx = requestCtx(request);
      const p = ctx.principal;
      const user = p.kind === 'api_token' ? null : await identity.user(db, p.userId);
      const ws = ctx.workspaceId ? await identity.workspace(db, ctx.workspaceId) : undefined;
      const memberships = p.kind === 'api_token' ? [] : await identity.workspacesOf(db, p.userId);
      const permissions = p.kind === 'api_token' ? permissionsOfToken(p.scopes) : ctx.role ? permissionsOfRole(ctx.role) : null;
      return {
        credential: { kind: p.kind, id: p.kind === 'session' ? p.sessionId : p.kind === 'api_token' ? p.tokenId : p.subject },
        user: user ? { id: user.id, name: user.name, email: user.email, email_verified: user.email_verified === 1 } : null,
        workspace: ws ? { id: ws.id, name: ws.name } : null,
        role: ctx.role,
        permissions,
        memberships: memberships.map((m) => ({ workspace: { id: m.id, name: m.name }, role: m.role, permissions: permissionsOfRole(m.role) })),
        ...(p.kind === 'session' && p.cookie?.csrfToken ? { csrf_token: p.cookie.csrfToken } : {}),
      };
    },
  );
}
