import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  /** Answers with a 2xx status. */
  ok: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationSeconds: number;
  /** The status every answer must have; anything else counts as an error of the run. */
  expectStatus: number;
  /** Headers that must differ per request (an Idempotency-Key). */
  perRequestHeaders?: () => Record<string, string>;
}

export async function load(spec: LoadSpec): Promise<LoadResult> {
  let wrongStatus = 0;
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    connections: spec.connections,
    duration: spec.durationSeconds,
    ...(spec.perRequestHeaders
      ? { requests: [{ setupRequest: (req: { headers: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...spec.perRequestHeaders!() } }) }] }
      : {}),
    // Checking every response's status keeps a broken setup from looking fast.
    setupClient: (client: { on(event: string, cb: (status: number) => void): void }) => {
      client.on('headers', ((h: { statusCode: number }) => {
        if (h.statusCode !== spec.expectStatus) wrongStatus++;
      }) as never);
    },
  } as never);
  const r = result as unknown as { requests: { average: number }; latency: { p50: number; p99: number }; errors: number; timeouts: number; '2xx': number };
  return { rps: r.requests.average, ok: r['2xx'], p50: r.latency.p50, p99: r.latency.p99, non2xx: wrongStatus, errors: r.errors + r.timeouts };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
