import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { createTestApp, type TestApp } from '../helpers/harness.js';
import { validatorCompiler } from '../../src/http/validation.js';
import { DashboardImportFile } from '../../src/dashboards/import.js';

/**
 * The server's ajv does not check schemas against JSON Schema's meta-schema (src/http/validation.ts:
 * compiling the meta-schema cost a new server's first request 40 ms). The route schemas are fixed
 * in the code, so this checks each one here instead, on the parts the validators were made for.
 */
let h: TestApp | undefined;
after(() => h?.close());

const metaCheck = new Ajv({ strict: false, discriminator: true });
// `minLength` must be a non-negative integer: the meta-schema refuses -1, ajv's code generator (which checks a keyword's type) does not.
const malformed = { type: 'object', properties: { name: { type: 'string', minLength: -1 } } };

describe('route schemas against the meta-schema', () => {
  test('every schema a route validates with is a valid JSON Schema (draft-07)', async () => {
    h = await createTestApp();
    const parts = h.app.schemaCompilation.validatedParts;
    assert.ok(parts.length > 200, `validators for every route's parts (${parts.length})`);
    assert.deepEqual(new Set(parts.map((p) => p.httpPart)), new Set(['body', 'querystring', 'params', 'headers']), 'all four parts are among them');
    const invalid = parts.filter((p) => !metaCheck.validateSchema(p.schema as object)).map((p) => `${p.method} ${p.url} ${p.httpPart}: ${metaCheck.errorsText(metaCheck.errors)}`);
    assert.deepEqual(invalid, []);
  });

  test('so is the schema the server validates outside a route part (a dashboard import file)', () => {
    assert.ok(metaCheck.validateSchema(DashboardImportFile), metaCheck.errorsText(metaCheck.errors));
  });

  test('the check refuses a malformed schema, which the server compiles without checking', () => {
    assert.equal(metaCheck.validateSchema(malformed), false);
    assert.match(metaCheck.errorsText(metaCheck.errors), /minLength/);
    const validate = validatorCompiler({ schema: malformed, method: 'POST', url: '/x', httpPart: 'body' });
    assert.equal(typeof validate, 'function', 'no meta-schema check (nor its compile) on the request path');
  });
});
