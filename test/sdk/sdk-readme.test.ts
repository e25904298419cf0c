import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, startServer, type ServerProcess } from '../helpers/processes.js';
import { EXAMPLE_COMPILER_OPTIONS, readmeExamples, writeExampleProject } from './readme-examples.js';

/**
 * The SDK's README, as a reader uses it: each ```ts example run against a real `wsp serve` (its
 * worker finishes the machine's operation on the embedded provider) with a workspace API token.
 * That they compile under `tsc --strict` is sdk-readme-compile.test.ts's (once: no database);
 * here each is only transpiled, the same emit without the type check.
 */
const run = promisify(execFile);
let tdb: TestDatabase;
let server: ServerProcess;
let token: string;
let dir: string;

before(async () => {
  tdb = await openTestDatabase();
  token = (await adminJson(['bootstrap'], tdb.env)).api_token!;
  server = await startServer(tdb.env);
  // Inside the repository, so that `@workspace-platform/sdk` resolves as an installed package does.
  fs.mkdirSync('.wsp-test', { recursive: true });
  dir = fs.mkdtempSync(path.resolve('.wsp-test/sdk-readme-'));
});
after(async () => {
  await server?.stop('SIGKILL');
  await tdb.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the README has its five examples, transpiled as tsc emits them', () => {
  const found = readmeExamples();
  assert.equal(found.length, 5);
  writeExampleProject(dir, found);
  // NodeNext in a `"type": "module"` package emits ES modules; transpileModule, which sees no
  // package.json, is told so.
  const options = { ...ts.convertCompilerOptionsFromJson(EXAMPLE_COMPILER_OPTIONS, dir).options, module: ts.ModuleKind.ES2022 };
  fs.mkdirSync(path.join(dir, 'out'));
  found.forEach((e, i) => fs.writeFileSync(path.join(dir, 'out', `example-${i}.js`), ts.transpileModule(e.code, { compilerOptions: options, fileName: `example-${i}.ts` }).outputText));
});

test('each example runs against a real server and prints what it says', async () => {
  const env = { ...process.env, WSP_SERVER: `${server.url}/v1`, WSP_TOKEN: token };
  const out = async (i: number) => (await run(process.execPath, [path.join(dir, 'out', `example-${i}.js`)], { env, timeout: 90_000 })).stdout;

  const created = await fetch(`${server.url}/v1/secrets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'db-password' }),
  });
  assert.equal(created.status, 201);
  assert.match(await out(0), /^sec_\w+ {2}db-password\n1 secrets\n$/);

  assert.match(await out(1), /^renamed to Checkout \(EU\)\nconflict: the dashboard is now at \S+\n$/);

  assert.match(await out(2), /^mch-\w+ is running\n$/);

  // An install under review with one change request open (a new value), for the review example.
  const api = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    assert.ok(res.ok, `${method} ${url}: ${res.status} ${await res.clone().text()}`);
    return res.json();
  };
  const settled = async (operationId: string) => {
    for (let i = 0; i < 600 && !(await api('GET', `/v1/operations/${operationId}`)).done; i++) await new Promise((r) => setTimeout(r, 100));
  };
  const pkg = await api('POST', '/v1/packages', { name: 'site' });
  const v1 = await api('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'hello.txt': 'Hello {{who}}\n' } });
  const install = await api('POST', '/v1/installs', { name: 'site', package_id: pkg.id, version_id: v1.id, values: { who: 'one' }, delivery: 'change_request' });
  await settled((await api('GET', `/v1/renders/${install.last_render.id}`)).operation_id);
  const changed = await api('PATCH', `/v1/installs/${install.id}`, { values: { who: 'two' } }, { 'if-match': (await api('GET', `/v1/installs/${install.id}`)).etag });
  await settled((await api('GET', `/v1/renders/${changed.last_render.id}`)).operation_id);
  assert.match(
    (await run(process.execPath, [path.join(dir, 'out', 'example-3.js')], { env: { ...env, WSP_INSTALL: install.id }, timeout: 90_000 })).stdout,
    /^#1 Update the values of site \(1\.0\.0\): mergeable \(git fetch origin refs\/changes\/1\)\n {2}modified hello\.txt\nmerged by tok_\w+\n$/,
  );

  assert.match(await out(4), /^404 7002\n422 7003 at body\.name: name must not be empty \(body\.name\) \[7003\]\n$/);
});
