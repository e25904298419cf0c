import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { adminJson, startServer, type ServerProcess } from '../helpers/processes.js';

/**
 * The SDK's README, as a reader uses it: each ```ts example is compiled under `tsc --strict`
 * against the built package, then run against a real `wsp serve` (its worker finishes the
 * machine's operation on the embedded provider) with a workspace API token.
 */
const run = promisify(execFile);
let tdb: TestDatabase;
let server: ServerProcess;
let token: string;
let dir: string;

const examples = () => [...fs.readFileSync('packages/sdk/README.md', 'utf8').matchAll(/^### (.+)\n[\s\S]*?```ts\n([\s\S]*?)```/gm)].map((m) => ({ title: m[1]!, code: m[2]! }));

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

test('the README has its four examples, and each compiles under tsc --strict', async () => {
  const found = examples();
  assert.deepEqual(found.map((e) => e.title), [
    'Every secret, page after page',
    "Create a dashboard, then change it without overwriting someone else's change",
    'Start a machine and wait until it runs',
    'Errors',
  ]);
  found.forEach((e, i) => fs.writeFileSync(path.join(dir, `example-${i}.ts`), e.code));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, types: ['node'], outDir: 'out', skipLibCheck: false }, include: ['*.ts'] }),
  );
  const tsc = await run(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', dir]).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
  assert.ok(!('failed' in tsc), `the README's examples do not compile:\n${tsc.stdout}`);
});

test('each example runs against a real server and prints what it says', async () => {
  const env = { ...process.env, WSP_SERVER: `${server.url}/v1`, WSP_TOKEN: token };
  const out = async (i: number) => (await run(process.execPath, [path.join(dir, 'out', `example-${i}.js`)], { env, timeout: 90_000 })).stdout;

  const created = await fetch(`${server.url}/v1/secrets`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'db-password' }) });
  assert.equal(created.status, 201);
  assert.match(await out(0), /^sec_\w+ {2}db-password\n1 secrets\n$/);

  assert.match(await out(1), /^renamed to Checkout \(EU\)\nconflict: the dashboard is now at \S+\n$/);

  assert.match(await out(2), /^mch-\w+ is running\n$/);

  assert.match(await out(3), /^404 7002\n422 7003 at body\.name: name must not be empty \(body\.name\) \[7003\]\n$/);
});
