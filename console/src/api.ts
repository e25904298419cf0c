/**
 * The console's only way to the server: the generated SDK (packages/sdk, @workspace-platform/sdk) on this origin, with the
 * cookie session of docs/spec-gaps.md, "Accounts and sign-in". Writes carry the session's CSRF token (from GET /v1/me) and
 * every call the workspace chosen (Service-Context).
 */
import { createClient, type ErrorEnvelope } from '@workspace-platform/sdk';

let csrfToken: string | null = null;
let workspace: string | null = localStorage.getItem('wsp.workspace');

export const setCsrfToken = (token: string | null) => (csrfToken = token);
export const currentWorkspace = () => workspace;
export function setWorkspace(id: string | null): void {
  workspace = id;
  if (id) localStorage.setItem('wsp.workspace', id);
  else localStorage.removeItem('wsp.workspace');
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const api = createClient({
  baseUrl: location.origin,
  fetch: (request: Request) => {
    const headers = new Headers(request.headers);
    if (workspace && !headers.has('service-context')) headers.set('service-context', workspace);
    if (csrfToken && WRITES.has(request.method)) headers.set('x-csrf-token', csrfToken);
    return fetch(new Request(request, { headers, credentials: 'same-origin' }));
  },
});

/** The first message of an error envelope, for people. */
export function messageOf(error: unknown): string {
  const e = error as Partial<ErrorEnvelope> | undefined;
  return e?.errors?.[0]?.message ?? 'Something went wrong; try again.';
}

/** The message of the error entry whose path ends at `field`, to show beside that field. */
export function fieldError(error: unknown, field: string): string | undefined {
  const e = error as Partial<ErrorEnvelope> | undefined;
  return e?.errors?.find((x) => x.path?.[x.path.length - 1] === field)?.message;
}
