import { Type } from '@sinclair/typebox';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import type { App } from '../http/fastify-types.js';
import { CONSOLE_CSP, CONTENT_TYPES, consoleDirectory } from './files.js';

const SECURITY = { 'content-security-policy': CONSOLE_CSP, 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' };
const ASSET = /^[A-Za-z0-9_-]+-[A-Z0-9]{8}\.(js|css|map|txt)$/;

/**
 * The web console (docs/spec-gaps.md, "Platform metrics and the console") at /console/: a single-page application that only calls /v1
 * like any client. Every path under /console/ that is not an asset answers the page (the
 * application routes in the browser); assets carry their content hash in their names, so they
 * are cached for a year and never go stale.
 */
export function consoleRoutes(app: App): void {
  const dir = consoleDirectory();
  let page: Buffer | null = null;
  const indexPage = (): Buffer | null => {
    if (page) return page;
    try {
      page = fs.readFileSync(path.join(dir, 'index.html'));
    } catch {
      return null;
    }
    return page;
  };

  const sendPage = async (_request: unknown, reply: FastifyReply) => {
    const body = indexPage();
    if (!body) return reply.code(503).headers({ 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).send('The console is not built: run `npm run build`.\n');
    return reply
      .code(200)
      .headers({ ...SECURITY, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' })
      .send(body);
  };

  app.get('/console', { config: { auth: 'none', database: false }, schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 308));
  // docs/spec-gaps.md, "Platform metrics and the console": the server's root is the console (a browser pointed at the host lands there).
  app.get('/', { config: { auth: 'none', database: false }, schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  // The console's own addresses carry its state in their query (`?range=7d`, `?next=...`): the page takes any.
  const pageRoute = { config: { auth: 'none' as const, database: false as const }, schema: { hide: true, querystring: Type.Object({}, { additionalProperties: true }) } };
  app.get('/console/', pageRoute, sendPage);
  app.get<{ Params: { file: string } }>('/console/assets/:file', { config: { auth: 'none', database: false }, schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params;
    if (!ASSET.test(file)) return reply.code(404).headers({ 'content-type': 'text/plain; charset=utf-8' }).send('Not found\n');
    let body: Buffer;
    try {
      body = await fs.promises.readFile(path.join(dir, 'assets', file));
    } catch {
      return reply.code(404).headers({ 'content-type': 'text/plain; charset=utf-8' }).send('Not found\n');
    }
    return reply
      .code(200)
      .headers({ ...SECURITY, 'content-type': CONTENT_TYPES[path.extname(file)]!, 'cache-control': 'public, max-age=31536000, immutable' })
      .send(body);
  });
  app.get('/console/*', pageRoute, sendPage);
}
