import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { generateSdk, OPENAPI_FILE, ROOT, SCHEMA_FILE } from '../../scripts/sdk-generate.js';

/** The checked-in OpenAPI document and SDK types are what the routes generate today. */
test('sdk/openapi.json and src/sdk/schema.ts are current (else run `npm run sdk`)', async () => {
  const fresh = await generateSdk();
  for (const [file, text] of [
    [OPENAPI_FILE, fresh.openapi],
    [SCHEMA_FILE, fresh.schema],
  ] as const) {
    const checkedIn = fs.readFileSync(path.join(ROOT, file), 'utf8');
    assert.ok(checkedIn === text, `${file} is stale: run \`npm run sdk\` and commit the result`);
  }
});
