import type { components } from './schema.js';

export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type ErrorEntry = ErrorEnvelope['errors'][number];

/**
 * An error answer of the API, thrown by `unwrap` and the helpers: the HTTP status and the
 * envelope's entries, with the first entry's `code`, `message`, `path` and `metadata` at hand
 * (`err.code === 7030` is an If-Match conflict, `err.metadata.current_etag` the etag to retry with).
 */
export class WspError extends Error {
  override readonly name = 'WspError';
  readonly code: number;
  readonly path: string[];
  readonly metadata: Record<string, string>;

  constructor(
    readonly status: number,
    readonly errors: ErrorEntry[],
    readonly response?: Response,
  ) {
    const first = errors[0];
    super(first ? `${errors.map((e) => `${e.message}${e.path?.length ? ` (${e.path.join('.')})` : ''} [${e.code}]`).join('; ')}` : `the server answered ${status}`);
    this.code = first?.code ?? 0;
    this.path = first?.path ?? [];
    this.metadata = first?.metadata ?? {};
  }

  /** The error of a failed answer: the envelope's entries, or an OAuth error (RFC 6749) as one entry. */
  static from(response: Response, body: unknown): WspError {
    const envelope = body as Partial<ErrorEnvelope> & { error?: string; error_description?: string };
    if (Array.isArray(envelope?.errors)) return new WspError(response.status, envelope.errors, response);
    if (typeof envelope?.error === 'string') return new WspError(response.status, [{ code: 0, message: envelope.error_description ?? envelope.error }], response);
    return new WspError(response.status, [], response);
  }
}

/** A failed `{ data, error, response }`: what openapi-fetch answers, so every call can be unwrapped. */
export interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful call, or its `WspError` thrown:
 * `const dashboard = await unwrap(wsp.GET('/v1/dashboards/{id}', { params: { path: { id } } }))`.
 */
export async function unwrap<D>(pending: Promise<Answer<D>> | Answer<D>): Promise<D> {
  const answer = await pending;
  if (answer.response.ok) return answer.data as D;
  throw WspError.from(answer.response, answer.error);
}
