import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { App } from '../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { requestCtx } from '../http/context.js';
import { ApiError } from '../shared/errors.js';
import { identity } from './service.js';

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
    role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Null()]),
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
        summary: 'Who the caller is: user, workspace, role, credential kind',
        description: 'The credential this request carries, described: the user (none for a workspace API token), the workspace it acts in and the role there, the kind of credential, and for a browser session the CSRF token its writes send.',
        headers: requestHeaders(),
        response: { 200: Me, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => {
      const ctx = requestCtx(request);
      const p = ctx.principal;
      const user = p.kind === 'api_token' ? null : await identity.user(db, p.userId);
      const ws = ctx.workspaceId ? await identity.workspace(db, ctx.workspaceId) : undefined;
      return {
        credential: { kind: p.kind, id: p.kind === 'session' ? p.sessionId : p.kind === 'api_token' ? p.tokenId : p.subject },
        user: user ? { id: user.id, name: user.name, email: user.email, email_verified: user.email_verified === 1 } : null,
        workspace: ws ? { id: ws.id, name: ws.name } : null,
        role: ctx.role,
        ...(p.kind === 'session' && p.cookie?.csrfToken ? { csrf_token: p.cookie.csrfToken } : {}),
      };
    },
  );
}
