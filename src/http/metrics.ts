import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { App } from './fastify-types.js';
import { retainedHeapBytes, watchRetainedHeap } from './retained-heap.js';

/** Request counts and latency by route, in a registry of this app's own (tests build many apps). */
export function installMetrics(app: App, processMetrics: boolean): Registry {
  const registry = new Registry();
  if (processMetrics) {
    collectDefaultMetrics({ register: registry });
    watchRetainedHeap();
    new Gauge({
      name: 'wsp_heap_retained_bytes',
      help: 'V8 heap in use just after the latest major collection: what the process retains, without the garbage nodejs_heap_size_used_bytes also counts (0 until the first major collection)',
      registers: [registry],
      collect() {
        const bytes = retainedHeapBytes();
        if (bytes !== null) this.set(bytes);
      },
    });
  }
  const requests = new Counter({
    name: 'wsp_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'wsp_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: 'wsp_route_schemas_pending',
    help: 'Route schemas not compiled yet: they compile once the server listens (or on first use), then this is 0',
    registers: [registry],
    collect() {
      this.set(app.schemaCompilation.waiting);
    },
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  return registry;
}
