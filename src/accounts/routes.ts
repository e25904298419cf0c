import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/fastify-types.js';
import { errorResponses, ListEnvelope, NoContent, PageQuery, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { cookieHeader, cookieValue, SESSION_COOKIE, sessionCookie } from '../http/cookies.js';
import { WorkspaceParams } from '../workspaces/schemas.js';
import type { AccountService, Client } from './service.js';
import { LOGIN_SECONDS, MAX_OIDC_STARTS_PER_IP, OIDC_START_WINDOW_SECONDS, type Oidc } from './oidc.js';
import { ApiError } from '../shared/errors.js';

const OIDC_START = '/v1/auth/oidc/start';
/** Binds a single sign-on to the browser that started it; sent only to the callback's path. */
const OIDC_BINDING_COOKIE = 'wsp_oidc';
const OIDC_COOKIE_PATH = '/v1/auth/oidc';
import {
  OidcCallbackQuery,
  OidcStartQuery,
  Redirect,
  Accepted,
  AcceptInvitationBody,
  CreatedInvitation,
  CreateInvitationBody,
  Invitation,
  InvitationParams,
  Providers,
  SetupBody,
  SetupDone,
  SetupState,
  SignedIn,
  SignInBody,
} from './schemas.js';
import { guarded } from '../auth/roles.js';

/** Inviting and revoking are an owner's or admin's (docs/spec-gaps.md, "Accounts and sign-in"). */
const NO_TOKEN = { tokenScope: null, tokenScopeWhy: { tokens: 'refused', why: 'an owner or admin invites people and revokes invitations; a token has no role (7023)' } } as const;

export interface AccountRouteOptions {
  secureCookie: boolean;
  /** Single sign-on; null when it is off. */
  oidc: Oidc | null;
  /** The hashes of the setup codes printed at start (src/accounts/setup-code.ts). */
  setupCodeHashes: () => Promise<string[]>;
  now: () => number;
}

const clientOf = (request: FastifyRequest): Client => ({ ip: request.ip, userAgent: request.headers['user-agent'], requestId: request.id });

export function accountRoutes(app: App, accounts: AccountService, opts: AccountRouteOptions): void {
  const setCookie = (reply: FastifyReply, s: { token: string; expiresAt: number }) => reply.header('set-cookie', sessionCookie(s.token, s.expiresAt - opts.now(), opts.secureCookie));

  app.post(
    '/sessions',
    {
      config: { auth: 'none', event: 'session.created' },
      schema: {
        operationId: 'createSession',
        tags: ['sessions'],
        summary: 'Sign in with an email and a password',
        description:
          'No credential needed. 201 with a new session token (shown once), or with `"cookie": true` the `wsp_session` cookie instead (HttpOnly, SameSite=Lax, Secure under https; writes made with it need X-CSRF-Token). A wrong email and a wrong password are the same 401 (7044). Failed sign-ins (a password checked and found wrong) are limited in fixed windows of 15 minutes: 30 per client address over every account, and 10 per client address and account (3 while the account has had 30 failures from all addresses together): beyond, 429 (7045) with Retry-After. No limit closes the account itself: its right password from an address that has not failed on it is checked and accepted. Right passwords count nothing, however many arrive at once; a sign-in that finds its address\'s places taken by checks under way waits for one (up to 20 s, then 429 7067 with Retry-After: 1).',
        security: [],
        body: SignInBody,
        response: { 201: SignedIn, ...errorResponses(401, 422, 429) },
      },
    },
    async (request, reply) => {
      const signed = await accounts.signIn(request.body, clientOf(request));
      if (!request.body.cookie) return reply.code(201).send({ id: signed.id, token: signed.token, user_id: signed.user_id, expires_at: signed.expires_at });
      setCookie(reply, { token: signed.token, expiresAt: signed.expires_at });
      return reply.code(201).send({ id: signed.id, user_id: signed.user_id, expires_at: signed.expires_at });
    },
  );

  app.get(
    '/auth/providers',
    {
      config: { auth: 'none', database: false, operationIdWhy: 'one answer naming every sign-in method that is on' },
      schema: {
        operationId: 'getAuthProviders',
        tags: ['sessions'],
        summary: 'Which sign-in methods are on',
        description: 'Whether passwords and single sign-on are on, and where a browser starts single sign-on, so that a sign-in page shows only what works. Needs no credential.',
        security: [],
        response: { 200: Providers, ...errorResponses(422) },
      },
    },
    async () => ({ password: true, oidc: opts.oidc !== null, oidc_start_url: opts.oidc ? OIDC_START : null }),
  );

  const oidcOf = () => {
    if (!opts.oidc) throw new ApiError('NOT_FOUND', { message: 'Single sign-on is not configured on this server (WSP_OIDC_ISSUER)' });
    return opts.oidc;
  };

  app.get(
    '/auth/oidc/start',
    {
      config: { auth: 'none', operationIdWhy: "a step of the browser's single sign-on, not a resource" },
      schema: {
        operationId: 'startOidcSignIn',
        tags: ['sessions'],
        summary: 'Single sign-on: send the browser to the OpenID provider',
        description: `A redirect (302) to the provider's authorization endpoint (the code flow with PKCE, a state and a nonce), with the cookie \`${OIDC_BINDING_COOKIE}\` (HttpOnly, SameSite=Lax, Path=${OIDC_COOKIE_PATH}, ${LOGIN_SECONDS / 60} minutes) that binds the login to this browser: the callback refuses a browser without it (login CSRF, RFC 9700 §4.7). \`return_to\` is a path of this server the browser comes back to (else \`/console/\`). More than ${MAX_OIDC_STARTS_PER_IP} starts from one client address in ${OIDC_START_WINDOW_SECONDS / 60} minutes: 429 (7060) with Retry-After. 404 when single sign-on is off; 503 (7053) when the provider cannot be reached.`,
        security: [],
        querystring: OidcStartQuery,
        response: { 302: Redirect, ...errorResponses(404, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      const { url, binding } = await oidcOf().start(request.query.return_to, request.ip);
      reply.header('set-cookie', cookieHeader(OIDC_BINDING_COOKIE, binding, { path: OIDC_COOKIE_PATH, maxAgeSeconds: LOGIN_SECONDS, secure: opts.secureCookie }));
      return reply.redirect(url, 302);
    },
  );

  app.get(
    '/auth/oidc/callback',
    {
      // A browser signing in whose account proves its address here, or takes it from an account
      // that never proved it, records that too (user.email_verified, user.email_released).
      config: { auth: 'none', event: 'session.created', operationIdWhy: "a step of the browser's single sign-on, not a resource" },
      schema: {
        operationId: 'finishOidcSignIn',
        tags: ['sessions'],
        summary: 'Single sign-on: where the OpenID provider sends the browser back',
        description: `Checks the state (a login this server started, used once, within 10 minutes, in this very browser: its \`${OIDC_BINDING_COOKIE}\` cookie), exchanges the code with its PKCE verifier, checks the ID token (signature, issuer, audience, expiry, nonce), finds the user, sets the \`wsp_session\` cookie and redirects (302) to the \`return_to\` of the start. The user is the one linked to the provider's subject; else the one whose proven address the provider vouches for; else, when the browser is signed in to the account holding that address unproven, that account (which proves it now); else a new user (when invited or WSP_OIDC_AUTO_CREATE is on), who takes the address from any account that never proved it. Single sign-on never signs in to an account whose address nobody proved. Refused, with no session made: 400 (7052) with the reason; a person with no user, no pending invitation for their email, and WSP_OIDC_AUTO_CREATE off: 403 (7051).`,
        security: [],
        querystring: OidcCallbackQuery,
        response: { 302: Redirect, ...errorResponses(400, 403, 404, 422, 503) },
      },
    },
    async (request, reply) => {
      const cookies = request.headers.cookie;
      // The binding is spent whatever the outcome: a second callback in this browser starts again.
      reply.header('set-cookie', cookieHeader(OIDC_BINDING_COOKIE, '', { path: OIDC_COOKIE_PATH, maxAgeSeconds: 0, secure: opts.secureCookie }));
      const browser = { binding: cookieValue(cookies, OIDC_BINDING_COOKIE), session: cookieValue(cookies, SESSION_COOKIE) };
      const { session, returnTo } = await oidcOf().callback(request.query, browser, clientOf(request));
      setCookie(reply, session);
      return reply.redirect(returnTo, 302);
    },
  );

  app.post(
    '/workspaces/:id/invitations',
    {
      config: { scope: 'workspace', ...guarded('invitations.manage'), ...NO_TOKEN, event: 'invitation.created' },
      schema: {
        operationId: 'createWorkspaceInvitation',
        tags: ['workspaces'],
        summary: 'Invite someone by email (owner or admin)',
        description: "The `url` carries the invitation's secret and is shown only here; it works for 7 days, once. Only an owner invites an owner (403 7049).",
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: WorkspaceParams,
        body: CreateInvitationBody,
        response: { 201: CreatedInvitation, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await accounts.invite(workspaceCtx(request), request.params.id, request.body)),
  );

  app.get(
    '/workspaces/:id/invitations',
    {
      // Users need the role (the service checks it); tokens the scope, as for the members list.
      config: { scope: 'workspace', ...guarded('invitations.read'), tokenScope: 'members:read' },
      schema: {
        operationId: 'listWorkspaceInvitations',
        tags: ['workspaces'],
        summary: "The workspace's pending invitations, newest first (owner or admin; API tokens with members:read)",
        description: "Not yet accepted, revoked or expired. Never shows an invitation's secret.",
        headers: requestHeaders(),
        params: WorkspaceParams,
        querystring: PageQuery(100, 50),
        response: { 200: ListEnvelope(Invitation), ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => accounts.invitations(workspaceCtx(request), request.params.id, { limit: request.query.limit, cursor: request.query.cursor }),
  );

  app.delete(
    '/workspaces/:id/invitations/:inv',
    {
      config: { scope: 'workspace', ...guarded('invitations.manage'), ...NO_TOKEN, event: 'invitation.revoked' },
      schema: {
        operationId: 'deleteWorkspaceInvitation',
        tags: ['workspaces'],
        summary: 'Revoke a pending invitation (owner or admin)',
        description: 'Its link answers 410 from then on. One that was used, revoked or never existed: 404.',
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        params: InvitationParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      await accounts.revokeInvitation(workspaceCtx(request), request.params.id, request.params.inv);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/invitations::accept',
    {
      config: { auth: 'optional', tokenScope: null, tokenScopeWhy: { tokens: 'refused', why: 'accepting makes a user a member; a token has no user (7024)' }, event: 'invitation.accepted' },
      schema: {
        operationId: 'acceptInvitation',
        tags: ['workspaces'],
        summary: 'Accept an invitation',
        description:
          "Signed in (a session, a cookie or a JWT): the caller joins the workspace with the invitation's role (a member already keeps their role). Not signed in: a user is made with the invitation's email, `name` and `password`, joins, and gets the `wsp_session` cookie. An unknown secret is 404; one used, revoked or expired 410 (7046); a new user whose email someone already has 409 (7047).",
        // A credential is optional here: none is one of the alternatives.
        security: [{ bearer: [] }, { cookie: [] }, {}],
        body: AcceptInvitationBody,
        response: { 200: Accepted, ...errorResponses(401, 403, 404, 409, 410, 422) },
      },
    },
    async (request, reply) => {
      const { accepted, session } = await accounts.accept(request.principal, request.body, clientOf(request));
      if (session) setCookie(reply, session);
      return accepted;
    },
  );

  app.get(
    '/setup',
    {
      config: { auth: 'none', operationIdWhy: 'whether the first run is still to do: nothing named setup is read' },
      schema: {
        operationId: 'getSetupState',
        tags: ['sessions'],
        summary: 'Whether the first run is still to do',
        description:
          "`required` is true while the database has no user: a sign-in page then offers the first-run form (POST /v1/setup with the code the server printed in its log) instead of a sign-in nobody can pass. Needs no credential; it says no more than POST /v1/setup's 403 or 410 would.",
        security: [],
        response: { 200: SetupState, ...errorResponses(422) },
      },
    },
    async () => ({ required: await accounts.setupRequired() }),
  );

  app.post(
    '/setup',
    {
      config: { auth: 'none', event: 'workspace.set_up', operationIdWhy: 'the first run, done once: nothing named setup is made' },
      schema: {
        operationId: 'setUp',
        tags: ['sessions'],
        summary: 'First run: make the first owner and workspace with the setup code',
        description:
          'While the database has no user, the server prints a one-time setup code in its log at start. This makes the first owner (with a password), a workspace, and a signed-in `wsp_session` cookie. A wrong code is 403; once any user exists, 410 (7048).',
        security: [],
        body: SetupBody,
        response: { 201: SetupDone, ...errorResponses(403, 410, 422) },
      },
    },
    async (request, reply) => {
      const { done, session } = await accounts.setup(request.body, clientOf(request), await opts.setupCodeHashes());
      setCookie(reply, session);
      return reply.code(201).send(done);
    },
  );
}
