import { Type } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, UnixSeconds } from '../http/schemas.js';

export const ListedSession = Type.Object(
  {
    id: Type.String(),
    created_at: UnixSeconds(),
    last_used_at: UnixSeconds('Updated at most once a minute'),
    expires_at: UnixSeconds("When it ends unless used again: the earliest of 30 days idle, WSP_SESSION_MAX_DAYS from creation, and (a device login approved with a JWT) that JWT's exp"),
    issued_by: Type.Union([Type.Literal('password'), Type.Literal('oidc'), Type.Literal('device'), Type.Literal('operator')]),
    user_agent: Type.Union([Type.String(), Type.Null()], { description: 'The User-Agent of the client the session was issued to (first 256 characters)' }),
    ip: Type.Union([Type.String(), Type.Null()], { description: 'The client address it was issued to' }),
    current: Type.Boolean({ description: 'The session making this request' }),
  },
  { title: 'ListedSession', additionalProperties: false },
);

export const SessionList = ListEnvelope(ListedSession, 'Newest first');

export const ListSessionsQuery = PageQuery(100, 50);

export const SessionIdParams = Type.Object({ id: PathId(64, 'Session id, `ses_<id>` or bare') });
