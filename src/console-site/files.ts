import fs from 'node:fs';
import path from 'node:path';

/**
 * Where the built console lives: dist/console of the package, found by walking up from this
 * module (dist/wsp.mjs when bundled, src/console-site when run by tsx) to the package root.
 */
export function consoleDirectory(): string {
  let dir = path.dirname(new URL(import.meta.url).pathname);
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, 'dist/console');
}

export const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Every page of the console: its own origin only, nothing inline, never framed. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
