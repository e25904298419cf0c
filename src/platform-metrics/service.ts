import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { userIdOf } from '../auth/principal.js';
import { ApiError, notFound } from '../shared/errors.js';
import { nowSeconds } from '../shared/clock.js';
import { canonicalId } from '../shared/ids.js';
import { PLATFORM_METRICS } from './catalog.js';
import { NOT_WRITES } from '../events/minute-counts.js';
import { platformMetricsStore as store, type Buckets, type Interval } from './store.js';
import { DEFAULT_POINTS, DEFAULT_SPAN_SECONDS, MAX_POINTS, METRIC_FILTERS, type SeriesQuery, type Series } from './schemas.js';

export type PlatformMetricsDeps = Pick<ServiceDeps, 'db' | 'clock' | 'engine' | 'log'>;

/** How many intervals hold each point `from + (i+1)·step` (or their weights' sum). */
export function gauge(intervals: readonly Interval[], b: Buckets, weighted = false): number[] {
  const out = new Array<number>(b.count).fill(0);
  for (const { start, end, weight } of intervals) {
    // Points t with start <= t < end.
    const first = Math.max(0, Math.ceil((start - b.from) / b.step) - 1);
    const stop = end === null ? b.count : Math.min(b.count, Math.ceil((end - b.from) / b.step) - 1);
    for (let i = first; i < stop; i++) out[i]! += weighted ? (weight ?? 0) : 1;
  }
  return weighted ? out.map((v) => Math.round(v * 100) / 100) : out;
}

/** The range and step a query asks for, checked. */
export function bucketsOf(q: SeriesQuery, now: number): Buckets {
  const to = q.to ?? now;
  const from = q.from ?? Math.max(0, to - DEFAULT_SPAN_SECONDS);
  if (from >= to) throw new ApiError('VALIDATION_FAILED', { message: '`from` must be before `to`', path: ['from'] });
  const step = q.step ?? Math.max(1, Math.ceil((to - from) / DEFAULT_POINTS));
  const count = Math.ceil((to - from) / step);
  if (count > MAX_POINTS) {
    throw new ApiError('VALIDATION_FAILED', {
      message: `This range and step make ${count} points; at most ${MAX_POINTS}: use a step of at least ${Math.ceil((to - from) / MAX_POINTS)} seconds`,
      path: ['step'],
      metadata: { max_points: String(MAX_POINTS) },
    });
  }
  return { from, step, count };
}

/** Platform metrics (docs/spec-gaps.md, "Platform metrics and the console"): series computed from the workspace's own records and events. */
export function createPlatformMetricsService({ db, clock, engine, log }: PlatformMetricsDeps) {
  const countingFailed = (err: unknown) => log.warn({ err }, 'counting closed minutes of events failed; the series reads the events instead');
  /** `now`: the time the series' buckets were cut at, read once (a second ticking between two reads would split them). */
  async function values(ctx: WorkspaceContext, key: string, b: Buckets, q: SeriesQuery, now: number): Promise<number[]> {
    const until = b.from + b.count * b.step;
    const ws = ctx.workspaceId;
    // The machines' series: of one cluster and/or one region (a machine's location).
    const scope = { cluster: q.cluster && canonicalId('cl', q.cluster), region: q.region };
    switch (key) {
      case 'machines_running': {
        const alive = await store.machinesAlive(db, ws, b, scope);
        const suspended = gauge(await store.suspensions(db, ws, b.from, until, scope), b);
        return alive.map((n, i) => Math.max(0, n - suspended[i]!));
      }
      case 'machines_suspended':
        return gauge(await store.suspensions(db, ws, b.from, until, scope), b);
      case 'monthly_cost_cents':
        return gauge(await store.suspensions(db, ws, b.from, until, scope), b, true);
      case 'renders':
        return store.renders(db, ws, b, { install: q.install && canonicalId('inst', q.install), status: q.status });
      case 'secret_accesses':
        return store.events(db, { engine, workspaceId: ws, buckets: b, filter: { type: 'secret_version.accessed' }, now, onCountingFailed: countingFailed });
      case 'writes':
        return store.events(db, { engine, workspaceId: ws, buckets: b, filter: { type: q.type, exclude: NOT_WRITES }, now, onCountingFailed: countingFailed });
      case 'notifications_unread': {
        const user = userIdOf(ctx.principal);
        if (!user) throw new ApiError('USER_REQUIRED', { message: 'Notifications belong to users; an API token has none to count' });
        return gauge(await store.unread(db, user, b.from, until), b);
      }
      default:
        throw notFound('platform metric', ['key']);
    }
  }

  return {
    list: () => ({ data: PLATFORM_METRICS.map((m) => ({ ...m, filter_keys: [...m.filter_keys] })) }),

    async series(ctx: WorkspaceContext, key: string, q: SeriesQuery): Promise<Series> {
      const metric = PLATFORM_METRICS.find((m) => m.key === key);
      if (!metric) throw new ApiError('NOT_FOUND', { message: `There is no platform metric ${key} (GET /v1/platform_metrics lists them)`, path: ['key'] });
      if (q.version !== undefined && q.version !== metric.version) {
        throw new ApiError('NOT_FOUND', {
          message: `The platform metric ${key} has no version ${q.version}; it is at version ${metric.version}`,
          path: ['version'],
          metadata: { current_version: String(metric.version) },
        });
      }
      const unknown = METRIC_FILTERS.find((f) => q[f] !== undefined && !metric.filter_keys.includes(f));
      if (unknown) throw new ApiError('VALIDATION_FAILED', { message: `${key} cannot be narrowed by ${unknown}; its filters: ${metric.filter_keys.join(', ') || 'none'}`, path: [unknown] });
      const now = nowSeconds(clock);
      const b = bucketsOf(q, now);
      const v = await values(ctx, key, b, q, now);
      return {
        key,
        version: metric.version,
        unit: metric.unit,
        from: b.from,
        to: b.from + b.count * b.step,
        step: b.step,
        points: v.map((value, i) => [b.from + (i + 1) * b.step, value] as [number, number]),
      };
    },
  };
}

export type PlatformMetricsService = ReturnType<typeof createPlatformMetricsService>;
