#!/usr/bin/env node
// `npm run build`, third step: the web console (console/), bundled by esbuild into
// dist/console: index.html and assets whose names carry their content hash, so the server can
// let browsers keep them for a year (src/console-site). No CDN, no inline script or style: the
// page runs under a Content-Security-Policy of 'self' only.
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const out = path.join(root, 'dist/console');
fs.rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: [path.join(root, 'console/src/main.tsx')],
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: 'linked',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((f) => path.relative(out, path.resolve(root, f)));
const js = outputs.find((f) => f.endsWith('.js'));
const css = outputs.find((f) => f.endsWith('.css'));
const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Workspace Platform</title>
    <link rel="icon" href="data:," />
    ${css ? `<link rel="stylesheet" href="/console/${css}" />` : ''}
    <script type="module" src="/console/${js}"></script>
  </head>
  <body>
    <div id="app"></div>
    <noscript>The console needs JavaScript.</noscript>
  </body>
</html>
`;
fs.writeFileSync(path.join(out, 'index.html'), html);
