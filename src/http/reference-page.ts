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
