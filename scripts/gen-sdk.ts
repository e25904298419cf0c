// `npm run sdk`: regenerates sdk/openapi.json and src/sdk/schema.ts from the routes.
import fs from 'node:fs';
import path from 'node:path';
import { generateSdk, OPENAPI_FILE, ROOT, SCHEMA_FILE } from './sdk-generate.js';

const { openapi, schema } = await generateSdk();
for (const [file, text] of [
  [OPENAPI_FILE, openapi],
  [SCHEMA_FILE, schema],
] as const) {
  fs.mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
  fs.writeFileSync(path.join(ROOT, file), text);
  console.log(`wrote ${file} (${text.length} bytes)`);
}
