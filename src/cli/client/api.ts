import { createClient, type ErrorEnvelope, type WspClient } from '@workspace-platform/sdk';
import { packageVersion } from '../../shared/package-root.js';
import { CliError, EXIT } from './exit-codes.js';
import { requireCredentials, requireWorkspace, type Credentials } from './credentials.js';

/** No request of the CLI waits longer than this for an answer. */
const REQUEST_TIMEOUT_MS = 30_000;

const timedFetch = (request: Request) => fetch(request, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });

export function apiFor(server: string, token?: string, workspace?: string | null): WspClient {
  return createClient({
    baseUrl: server,
    token,
    workspace: workspace ?? undefined,
    headers: { 'user-agent': `wsp-cli/${packageVersion()}` },
    fetch: timedFetch,
  });
}

export const apiAs = (c: Credentials) => apiFor(c.server, c.token, c.workspace);

type Answer<D> = { data?: D; error?: unknown; response: Response };

function reasonOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  if (e?.cause?.code) return e.cause.code;
  if (e instanceof SyntaxError) return 'the answer is not this API’s JSON';
  return e?.cause?.message ?? e?.message ?? String(err);
}

export function unreachable(server: string, err: unknown): CliError {
  return new CliError(`cannot reach the server at ${server} (${reasonOf(err)})`, EXIT.UNREACHABLE);
}

/** One line per envelope entry: message, field path, stable code. */
export function describeEnvelope(status: number, error: unknown): string {
  const entries = (error as ErrorEnvelope | undefined)?.errors;
  if (!Array.isArray(entries) || entries.length === 0) return `the server answered ${status}`;
  return entries.map((e) => `${e.message}${e.path?.length ? ` (${e.path.join('.')})` : ''} [${e.code}]`).join('\n  ');
}

/**
 * Awaits an SDK call: its data when it succeeded; otherwise the CLI error to exit with
 * (401: not logged in; another error answer: failed; no answer: unreachable).
 */
export async function send<D>(server: string, pending: Promise<Answer<D>>): Promise<D> {
  let answer: Answer<D>;
  try {
    answer = await pending;
  } catch (err) {
    throw unreachable(server, err);
  }
  const { response } = answer;
  if (response.ok) return answer.data as D;
  throw apiFailure(response.status, answer.error, 'the server no longer accepts your login (expired or revoked): run `wsp login`');
}

/**
 * The CLI error of an error answer: its envelope's lines, and the status and entries kept for
 * `--json`; a 401 is "not logged in" (exit 3), any other refusal exit 1.
 */
export function apiFailure(status: number, body: unknown, unauthorized?: string): CliError {
  const entries = (body as ErrorEnvelope | undefined)?.errors;
  const detail = { status, errors: Array.isArray(entries) ? entries : [] };
  if (status === 401) return new CliError(unauthorized ?? `401: ${describeEnvelope(status, body)}`, EXIT.NOT_LOGGED_IN, detail);
  return new CliError(`${status}: ${describeEnvelope(status, body)}`, EXIT.FAILED, detail);
}

/** The credentials of a workspace command (a workspace chosen, or an API token) and a client with them. */
export function workspaceClient(ctx: { io: { env: NodeJS.ProcessEnv } }) {
  const c = requireWorkspace(requireCredentials(ctx.io.env));
  return { c, api: apiAs(c) };
}
