/**
 * HTTP Basic credentials (RFC 7617), accepted only where a client cannot send a bearer token:
 * git over HTTP (`git clone https://x:TOKEN@host/...`, a credential helper). The password is the
 * credential; the user name is free, except that one naming a workspace (`ws_...`) is its
 * Service-Context, so a session (which acts in any of its user's workspaces) can say which.
 */
export interface BasicCredential {
  user: string;
  password: string;
}

const BASIC_RE = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i;

export function basicCredential(header: string | undefined): BasicCredential | null {
  const m = header ? BASIC_RE.exec(header) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** What a 401 of such a route asks for, so git answers it with the URL's or the helper's credentials. */
export const BASIC_CHALLENGE = 'Basic realm="Workspace Platform", charset="UTF-8"';
