/**
 * The growth test of the soak (issue 22, item 8): a robust (Theil–Sen) slope per metric over the
 * samples after the warm-up, and the growth from the first post-warm-up samples to the last.
 */
export interface Sample {
  /** Seconds since the soak started. */
  t: number;
  /** Requests answered so far. */
  requests: number;
  rssMb: number;
  /** The heap in use at the sample: with the garbage awaiting a collection (reported, not judged). */
  heapMb: number;
  /** The heap in use after the latest major collection (`wsp_heap_retained_bytes`); NaN before the first. */
  retainedHeapMb: number;
  fds: number;
  dbConnections: number;
  /** p99 and max of the event loop's delay since the previous sample (prom-client resets its histogram on each scrape). */
  loopP99Ms: number;
  loopMaxMs: number;
}

export type Metric = 'rssMb' | 'heapMb' | 'retainedHeapMb' | 'fds' | 'dbConnections' | 'loopP99Ms';

/**
 * The Theil–Sen slope of y over x: the median of the slopes between every pair of samples. A
 * sample of the heap in use is taken anywhere in the collector's cycle, so one of them may hold a
 * major collection's worth of garbage (seen: 167 MB among samples of 75-100 MB, near the end of
 * an hour): least squares is pulled by such a sample at either end of the window (it made that
 * hour 25.6 MB an hour, over the limit of 20; the median of the pairwise slopes 18.4), the median
 * is not, and a steady leak still shows at its full rate (every pair sees it).
 */
export function robustSlope(xs: number[], ys: number[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) if (xs[j] !== xs[i]) slopes.push((ys[j]! - ys[i]!) / (xs[j]! - xs[i]!));
  }
  if (slopes.length === 0) return 0;
  slopes.sort((a, b) => a - b);
  const mid = slopes.length >> 1;
  return slopes.length % 2 === 1 ? slopes[mid]! : (slopes[mid - 1]! + slopes[mid]!) / 2;
}

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
  /** Theil–Sen slopes (robustSlope): what is judged. */
  per1000Requests: number;
  perHour: number;
  /** The least-squares slope per hour, reported beside it. */
  leastSquaresPerHour: number;
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
export function judge(all: Sample[], metric: Metric, limit: Limit): Verdict {
  // A figure not known yet (the retained heap before the first major collection) is left out;
  // a judged metric with fewer than two known samples fails: there is nothing to judge it by.
  const samples = all.filter((s) => Number.isFinite(s[metric]));
  const ys = samples.map((s) => s[metric]);
  const per1000Requests = robustSlope(
    samples.map((s) => s.requests / 1000),
    ys,
  );
  const perHour = robustSlope(
    samples.map((s) => s.t / 3600),
    ys,
  );
  const leastSquaresPerHour = slope(
    samples.map((s) => s.t / 3600),
    ys,
  );
  const q = Math.max(1, Math.floor(samples.length / 4));
  const first = mean(ys.slice(0, q));
  const last = mean(ys.slice(-q));
  const growth = last - first;
  const unjudged = limit.per1000Requests === Infinity && limit.perHour === Infinity && limit.growth === Infinity;
  const within = samples.length >= 2 && per1000Requests <= limit.per1000Requests && perHour <= limit.perHour && growth <= limit.growth;
  return { metric, per1000Requests, perHour, leastSquaresPerHour, growth, first, last, ok: unjudged || within };
}

/** The samples with a leak added: `perRequest` more of the metric for every request answered since the first. */
export function withLeak(samples: Sample[], metric: Metric, perRequest: number): Sample[] {
  const r0 = samples[0]?.requests ?? 0;
  return samples.map((s) => ({ ...s, [metric]: s[metric] + (s.requests - r0) * perRequest }));
}
