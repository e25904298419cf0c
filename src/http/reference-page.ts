import Fastify, { type FastifyInstance } from 'fastify';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

/**
 * The reference page at /docs: Swagger UI (served from the package, nothing from a CDN), with
 * the product's name in its title and its top bar, leading back to the console. Scalar was
 * weighed (docs/decisions.md): its package needs Node 22 and brings 27 dependencies.
 */
const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="40" viewBox="0 0 300 40" role="img" aria-label="Workspace Platform API">
<rect x="2" y="8" width="24" height="24" rx="5" fill="#4f8cff"/><rect x="8" y="14" width="5" height="5" fill="#fff"/><rect x="15" y="14" width="5" height="5" fill="#fff"/><rect x="8" y="21" width="12" height="5" fill="#fff"/>
<text x="36" y="27" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="19" font-weight="600" fill="#fff">Workspace Platform API</text>
</svg>`;

const CSS = `.swagger-ui .topbar { background: #1d2433; }
.swagger-ui .topbar .download-url-wrapper { display: none; }
.swagger-ui .info .title small.version-stamp { background: #4f8cff; }`;

export const REFERENCE_PAGE: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  uiConfig: { docExpansion: 'list', deepLinking: true, displayOperationId: true, tryItOutEnabled: false },
  logo: { type: 'image/svg+xml', content: Buffer.from(LOGO), href: '/console/', target: '_self' },
  theme: { title: 'Workspace Platform API reference', css: [{ filename: 'workspace-platform.css', content: CSS }] },
};

/** Headers of the page's own answers not passed on: the server answering sets its own. */
const NOT_PASSED_ON = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
/** The request headers the page's answers depend on (conditional and ranged reads of its assets). */
const PASSED_IN = ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since', 'range'] as const;

/**
 * Serves the reference page at /docs, Swagger UI loaded on the first request for it instead of
 * at start: the plugin, @fastify/static and the scan of its assets were the largest part of
 * `wsp serve`'s start that no API request needs (docs/benchmarks.md). The page lives in an
 * application of its own, made once, holding the document as it is then (it does not change
 * while the server runs), and /docs and /docs/* here hand each request to it.
 */
export function installReferencePage(app: FastifyInstance, document: () => unknown): void {
  let page: Promise<FastifyInstance> | undefined;
  const load = async () => {
    const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
    const ui = Fastify({ logger: false });
    await ui.register(swagger, { mode: 'static', specification: { document: document() as never } });
    await ui.register(swaggerUi, REFERENCE_PAGE);
    await ui.ready();
    return ui;
  };
  for (const url of ['/docs', '/docs/*']) {
    app.route({
      method: 'GET',
      url,
      schema: { hide: true },
      config: { auth: 'none' },
      handler: async (request, reply) => {
        page ??= load().catch((err: unknown) => {
          page = undefined;
          throw err;
        });
        const headers: Record<string, string> = {};
        for (const h of PASSED_IN) {
          const v = request.headers[h];
          if (typeof v === 'string') headers[h] = v;
        }
        // HEAD is answered by this route too (Fastify runs it and drops the body).
        const res = await (await page).inject({ method: 'GET', url: request.url, headers });
        // What the page does not have is not found here, in this server's envelope.
        if (res.statusCode === 404) {
          reply.callNotFound();
          return reply;
        }
        reply.code(res.statusCode);
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !NOT_PASSED_ON.has(name)) reply.header(name, value);
        return reply.send(res.rawPayload);
      },
    });
  }
}
