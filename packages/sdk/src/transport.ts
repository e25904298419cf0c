/** What the client sends requests with: retries and the Idempotency-Key they rely on. */
export interface TransportOptions {
  /** The fetch to send with (default: the global one). */
  fetch?: (input: Request) => Promise<Response>;
  /**
   * How many times a request is sent again after a network failure, a 429 or a 503, waiting as
   * Retry-After says (else 0.5 s, 1 s, 2 s...). Only requests that are safe to repeat: GET,
   * HEAD, and writes carrying an Idempotency-Key. Default 2; 0 turns retries off.
   */
  retries?: number;
  /**
   * Give every POST without one an `Idempotency-Key` (a random UUID), so that a retry after a
   * lost answer is replayed by the server instead of done twice. Default true; a key you set
   * yourself is kept.
   */
  idempotencyKeys?: boolean;
  /** Waiting between attempts (tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<void>;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const RETRY_STATUSES = new Set([429, 503]);
const MAX_WAIT_MS = 30_000;

/**
 * A random UUID v4. `crypto.randomUUID` exists only in secure contexts, and a console served
 * over plain http from another host is not one; getRandomValues is everywhere.
 */
export function randomKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function retryAfterMs(response: Response, attempt: number): number {
  const header = response.headers.get('retry-after');
  const seconds = header !== null && /^\d+$/.test(header.trim()) ? Number(header) : NaN;
  return Math.min(MAX_WAIT_MS, Number.isFinite(seconds) ? seconds * 1000 : 500 * 2 ** attempt);
}

/** 409 with code 7031: the first request with this Idempotency-Key is still being answered. */
async function stillInFlight(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { errors?: { code?: number }[] } | null;
  return body?.errors?.[0]?.code === 7031;
}

/** A fetch that adds Idempotency-Keys to POSTs and retries what is safe to retry. */
export function transport(opts: TransportOptions = {}): (input: Request) => Promise<Response> {
  const send = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  const retries = Math.max(0, opts.retries ?? 2);
  const sleep = opts.sleep ?? wait;
  return async (input) => {
    let request = input;
    if (request.method === 'POST' && opts.idempotencyKeys !== false && !request.headers.has('idempotency-key')) {
      const headers = new Headers(request.headers);
      headers.set('idempotency-key', randomKey());
      request = new Request(request, { headers });
    }
    const repeatable = SAFE.has(request.method) || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt++) {
      const last = !repeatable || attempt >= retries;
      let response: Response;
      try {
        response = await send(last ? request : request.clone());
      } catch (err) {
        if (last || request.signal.aborted) throw err;
        await sleep(500 * 2 ** attempt);
        continue;
      }
      if (last || !(RETRY_STATUSES.has(response.status) || (await stillInFlight(response)))) return response;
      await response.body?.cancel();
      await sleep(retryAfterMs(response, attempt));
    }
  };
}
