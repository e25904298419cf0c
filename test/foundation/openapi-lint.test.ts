import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { generateSdk } from '../../scripts/sdk-generate.js';
import { FIELD_DESCRIPTIONS } from '../../src/http/openapi-descriptions.js';
import { usedDescriptions } from '../../src/http/openapi-document.js';

/**
 * The document as generators and linters take it: Redocly's recommended rules report nothing,
 * openapi-typescript's output compiles under --strict, resources are named components used by
 * reference, and every operation has a description and examples that fit its schemas. The
 * document is the one the app serves (`generateSdk` builds the app and asks it), the same on
 * either engine, so this file runs once.
 */
const run = promisify(execFile);
let doc: any;
let typescript: string;
let dir: string;
before(async () => {
  const generated = await generateSdk();
  doc = JSON.parse(generated.openapi);
  typescript = generated.schema;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-openapi-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${p}`, op })));

test("Redocly's recommended rules: 0 errors and 0 warnings on the served document", async () => {
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  const out = await run(process.execPath, [path.resolve('node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--format=json', '--max-problems=1000'], { cwd: dir, maxBuffer: 64 << 20 }).catch(
    (err: { stdout: string }) => ({ stdout: err.stdout }),
  );
  const report = JSON.parse(out.stdout) as { problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
  assert.deepEqual(
    report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    [],
  );
});

test("openapi-typescript's output of the served document compiles under tsc --strict", async () => {
  const file = path.join(dir, 'schema.ts');
  fs.writeFileSync(file, typescript);
  const tsc = await run(process.execPath, [
    path.resolve('node_modules/typescript/bin/tsc'),
    '--strict',
    '--noEmit',
    '--target',
    'ES2022',
    '--module',
    'NodeNext',
    '--moduleResolution',
    'NodeNext',
    file,
  ]).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
  assert.ok(!('failed' in tsc), tsc.stdout);
});

test('resources are named components, used by reference from their operations', () => {
  for (const name of [
    'Dashboard',
    'DashboardRevision',
    'Widget',
    'Snippet',
    'Secret',
    'SecretVersion',
    'Package',
    'PackageVersion',
    'Install',
    'Render',
    'ComputeConfig',
    'Machine',
    'Suspension',
    'Notification',
    'Workspace',
    'Member',
    'Invitation',
    'ListedToken',
    'Webhook',
    'Delivery',
    'AuditEvent',
    'Operation',
    'ErrorEnvelope',
  ]) {
    assert.ok(doc.components.schemas[name], `components.schemas.${name}`);
  }
  const schemaOf = (p: string, m: string, status: string) => doc.paths[p][m].responses[status].content['application/json'].schema;
  assert.deepEqual(schemaOf('/v1/dashboards/{id}', 'get', '200'), { $ref: '#/components/schemas/Dashboard' });
  assert.deepEqual(schemaOf('/v1/dashboards', 'get', '200').properties.data.items, { $ref: '#/components/schemas/Dashboard' });
  assert.deepEqual(schemaOf('/v1/machines/{id}', 'get', '200'), { $ref: '#/components/schemas/Machine' });
  assert.deepEqual(doc.paths['/v1/secrets'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/CreateSecretBody' });
  // A discriminated union maps each tag to its variant's component.
  assert.deepEqual(doc.components.schemas.Widget.discriminator, {
    propertyName: 'widget_type',
    mapping: { snippet: '#/components/schemas/WidgetSnippet', platform_metric: '#/components/schemas/WidgetPlatformMetric' },
  });
  for (const [value, ref] of Object.entries(doc.components.schemas.FilterDefinition.discriminator.mapping as Record<string, string>)) {
    const kind = doc.components.schemas[ref.split('/').pop()!].properties.kind;
    assert.equal(kind.const ?? kind.enum?.[0], value);
  }
});

test('every operation has an operationId, a summary and a description; every tag is described', () => {
  const missing = operations()
    .filter(({ op }) => !op.operationId || !op.summary || !op.description)
    .map(({ key }) => key);
  assert.deepEqual(missing, []);
  const described = new Set((doc.tags as { name: string; description: string }[]).filter((t) => t.description).map((t) => t.name));
  assert.deepEqual(
    operations().flatMap(({ key, op }) => (op.tags as string[]).filter((t) => !described.has(t)).map((t) => `${key}: ${t}`)),
    [],
  );
});

test('every request body and response with content has an example that its schema accepts', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats.default(ajv);
  ajv.addFormat('byte', /^[A-Za-z0-9+/]*={0,2}$/);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  // One validator per distinct schema: the error envelopes and many answers repeat theirs, and a
  // compile is most of this test's time (a fresh object would be compiled again at every use).
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  const validatorOf = (schema: unknown) => {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/');
    let v = validators.get(text);
    if (!v) validators.set(text, (v = ajv.compile(JSON.parse(text) as object)));
    return v;
  };
  const problems: string[] = [];
  for (const { key, op } of operations()) {
    const media = [
      ...Object.entries(op.requestBody?.content ?? {}).map(([type, m]) => [`request ${type}`, m] as const),
      ...Object.entries(op.responses as Record<string, any>).flatMap(([status, r]) => Object.entries(r.content ?? {}).map(([type, m]) => [`${status} ${type}`, m] as const)),
    ];
    for (const [where, m] of media as [string, any][]) {
      if (!('example' in m)) problems.push(`${key} ${where}: no example`);
      else {
        const validate = validatorOf(m.schema);
        if (!validate(m.example)) problems.push(`${key} ${where}: ${ajv.errorsText(validate.errors)}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('every field and every parameter has a description; every entry of the overlay describes a field that exists', () => {
  const missing: string[] = [];
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) return node.forEach((n) => walk(n, where));
    if (typeof node !== 'object' || node === null) return;
    const n = node as Record<string, unknown>;
    for (const [k, v] of Object.entries(n)) {
      if (k === 'example' || k === 'examples') continue;
      if (k === 'properties' && typeof v === 'object' && v !== null) {
        for (const [name, prop] of Object.entries(v as Record<string, { description?: string }>)) {
          if (!prop.description) missing.push(`${where}.${name}`);
          walk(prop, `${where}.${name}`);
        }
      } else walk(v, where);
    }
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, name);
  for (const { key, op } of operations()) {
    walk(op, key);
    for (const p of op.parameters ?? []) if (!p.description && !p.schema?.description) missing.push(`${key} ${p.in} ${p.name}`);
  }
  assert.deepEqual(missing, []);
  assert.deepEqual(
    Object.keys(FIELD_DESCRIPTIONS).filter((k) => !usedDescriptions.has(k)),
    [],
    'stale entries of src/http/openapi-descriptions.ts',
  );
});
