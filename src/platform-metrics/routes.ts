import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { MetricKeyPath, PlatformMetricList, Series, SeriesQuery } from './schemas.js';
import type { PlatformMetricsService } from './service.js';

export function platformMetricsRoutes(app: App, metrics: PlatformMetricsService): void {
  app.get(
    '/platform_metrics',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:read' },
      schema: {
        operationId: 'listPlatformMetrics',
        tags: ['platform_metrics'],
        summary: 'The platform metrics a `platform_metric` widget can draw',
        description: 'Each metric with its version, unit, kind (gauge or counter) and the filters its series accepts. Any member may read them; an API token needs `dashboards:read`.',
        headers: requestHeaders(),
        response: { 200: PlatformMetricList, ...errorResponses(401, 403) },
      },
    },
    async () => metrics.list(),
  );

  app.get(
    '/platform_metrics/:key/series',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:read' },
      schema: {
        operationId: 'getPlatformMetricSeries',
        tags: ['platform_metrics'],
        summary: "A platform metric's points over a time range",
        description:
          "Computed from the workspace's own records and events at the time of the call. Point i is at `from + (i+1)·step`: a gauge's value then, or a counter's total over the step that ends then. An unknown key, or a `version` the metric is not at, is 404 (the widget naming it should say so). A filter the metric does not take is 422.",
        headers: requestHeaders(),
        params: MetricKeyPath,
        querystring: SeriesQuery,
        response: { 200: Series, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => metrics.series(workspaceCtx(request), request.params.key, request.query),
  );
}
