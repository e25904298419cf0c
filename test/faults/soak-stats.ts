/**
 * The growth test of the soak (issue 22, item 8): a least-squares slope per metric over the
 * samples after the warm-up, and the growth from the first post-warm-up samples to the last.
 */
export interface Sample {
  /** Seconds since the soak started. */
  t: number;
  /** Requests answered so far. */
  requests: number;
  rssMb: number;
  heapMb: number;
  fds: number;
  dbConnections: number;
  /** p99 and max of the event loop's delay since the previous sample (prom-client resets its histogram on each scrape). */
  loopP99Ms: number;
  loopMaxMs: number;
}

export type Metric = 'rssMb' | 'heapMb' | 'fds' | 'dbConnections' | 'loopP99Ms';

/** The least-squares slope of y over x. */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export interface Limit {
  /** Most the fitted slope may be, per 1000 requests (the short run: what a leak per request shows as). */
  per1000Requests: number;
  /** Most the fitted slope may be, per hour (the long run). */
  perHour: number;
  /** Most the mean of the last quarter of the samples may exceed the mean of the first quarter by. */
  growth: number;
}

export interface Verdict {
  metric: Metric;
  per1000Requests: number;
  perHour: number;
  growth: number;
  first: number;
  last: number;
  ok: boolean;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/**
 * Judges one metric over the post-warm-up samples. Both slopes and the growth must be within the
 * limits: a slope alone is pulled by one garbage collection at either end of a short window; the
 * growth of quarter means alone misses a slow climb inside a long one.
 */
export function judge(samples: Sample[], metric: Metric, limit: Limit): Verdict {
  const ys = samples.map((s) => s[metric]);
  const per1000Requests = slope(samples.map((s) => s.requests / 1000), ys);
  const perHour = slope(samples.map((s) => s.t / 3600), ys);
  const q = Math.max(1, Math.floor(samples.length / 4));
  const first = mean(ys.slice(0, q));
  const last = mean(ys.slice(-q));
  const growth = last - first;
  return { metric, per1000Requests, perHour, growth, first, last, ok: per1000Requests <= limit.per1000Requests && perHour <= limit.perHour && growth <= limit.growth };
}

/** The samples with a leak added: `perRequest` more of the metric for every request answered since the first. */
export function withLeak(samples: Sample[], metric: Metric, perRequest: number): Sample[] {
  const r0 = samples[0]?.requests ?? 0;
  return samples.map((s) => ({ ...s, [metric]: s[metric] + (s.requests - r0) * perRequest }));
}
