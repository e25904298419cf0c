import { Type, type Static } from '@sinclair/typebox';
import { PathId, patterned, UnixSeconds } from '../http/schemas.js';

/** An email as people type them: one @, no spaces; compared case-insensitively. */
export const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  ...patterned('^[^\\s@]+@[^\\s@]+$', 'an email address such as ada@example.com', 'ada@example.com'),
  description: 'An email address (compared case-insensitively)',
});
/** What a new password must be (docs/spec-gaps.md, "Accounts and sign-in": 12-256 characters); checked before any hashing. */
export const NewPassword = Type.String({ minLength: 12, maxLength: 256, description: '12-256 characters' });
const Name = Type.String({ minLength: 1, maxLength: 100 });
const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')]);

export const SignInBody = Type.Object(
  {
    email: Email,
    // Any length up to the maximum: a password set before a rule changed still signs in.
    password: Type.String({ minLength: 1, maxLength: 256 }),
    cookie: Type.Optional(Type.Boolean({ description: 'true: set the wsp_session cookie (browsers) instead of answering the token' })),
  },
  { title: 'SignInBody', additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

export const SignedIn = Type.Object(
  {
    id: Type.String({ description: 'The new session' }),
    token: Type.Optional(Type.String({ description: 'The session token, shown once; absent when the cookie was asked for' })),
    user_id: Type.String(),
    expires_at: UnixSeconds('When the session ends unless used again'),
  },
  { title: 'SignedIn', additionalProperties: false },
);

export const Providers = Type.Object(
  {
    password: Type.Boolean({ description: 'POST /v1/sessions with an email and password' }),
    oidc: Type.Boolean({ description: 'Single sign-on with the OpenID provider of WSP_OIDC_ISSUER' }),
    oidc_start_url: Type.Union([Type.String(), Type.Null()], { description: 'Where a browser starts single sign-on (add ?return_to=/console/...)' }),
  },
  { title: 'Providers', additionalProperties: false },
);

export const CreateInvitationBody = Type.Object({ email: Email, role: Role }, { title: 'CreateInvitationBody', additionalProperties: false });

const invitationFields = {
  id: Type.String(),
  email: Type.String(),
  role: Role,
  expires_at: UnixSeconds('Seven days after it was made'),
};

export const CreatedInvitation = Type.Object(
  { ...invitationFields, url: Type.String({ description: 'WSP_PUBLIC_URL/console/invite#<secret>: the secret is shown only here' }) },
  { title: 'CreatedInvitation', additionalProperties: false },
);

export const Invitation = Type.Object(
  { ...invitationFields, created_at: UnixSeconds(), created_by: Type.String({ description: 'The user or API token that made it' }) },
  { title: 'Invitation', additionalProperties: false },
);

export const InvitationParams = Type.Object({
  id: PathId(53, 'Workspace id, `ws_<id>` or bare; length 1-53'),
  inv: PathId(64, 'Invitation id, `inv_<id>` or bare'),
});

export const AcceptInvitationBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 128, description: 'The secret after # in the invitation link' }),
    name: Type.Optional(Name),
    password: Type.Optional(NewPassword),
  },
  { title: 'AcceptInvitationBody', additionalProperties: false, description: 'Signed in: `token` alone. Not signed in: also `name` and `password` for the new user.' },
);
export type AcceptInvitationBody = Static<typeof AcceptInvitationBody>;

export const Accepted = Type.Object(
  {
    workspace_id: Type.String(),
    user_id: Type.String(),
    role: Role,
    session_id: Type.Union([Type.String(), Type.Null()], { description: 'The cookie session made for a new user; null when the caller was signed in' }),
  },
  { title: 'Accepted', additionalProperties: false },
);

export const SetupBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 64, description: 'The setup code the server printed in its log at start' }),
    email: Email,
    name: Name,
    password: NewPassword,
    workspace_name: Name,
  },
  { title: 'SetupBody', additionalProperties: false },
);
export type SetupBody = Static<typeof SetupBody>;

export const SetupState = Type.Object(
  { required: Type.Boolean({ description: 'True while the database has no user: POST /v1/setup makes the first owner' }) },
  { title: 'SetupState', additionalProperties: false },
);

export const SetupDone = Type.Object({ user_id: Type.String(), workspace_id: Type.String(), session_id: Type.String() }, { title: 'SetupDone', additionalProperties: false });

/** The longest `return_to` a single sign-on keeps: a console deep link is far shorter. */
export const MAX_RETURN_TO = 1024;

export const OidcStartQuery = Type.Object(
  { return_to: Type.Optional(Type.String({ maxLength: MAX_RETURN_TO, description: 'A path of this server to come back to, e.g. /console/ or /device?user_code=...' })) },
  { additionalProperties: false },
);

/** What a provider sends back: the code and state, or an error; providers add parameters of their own. */
export const OidcCallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096, description: "The provider's authorization code, exchanged here with its PKCE verifier" })),
    state: Type.Optional(Type.String({ maxLength: 512, description: 'The state this server sent at the start: it names the login' })),
    error: Type.Optional(Type.String({ maxLength: 256, description: "The provider's refusal (OAuth 2.0 error code), instead of a code" })),
    error_description: Type.Optional(Type.String({ maxLength: 1024, description: "The provider's refusal in words" })),
    iss: Type.Optional(Type.String({ maxLength: 2048, description: 'The issuer, when the provider sends it (RFC 9207)' })),
  },
  { additionalProperties: Type.String({ maxLength: 2048 }) },
);

export const Redirect = Type.Null({ description: 'A redirect: the Location header says where' });
