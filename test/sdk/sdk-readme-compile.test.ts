import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { readmeExamples, writeExampleProject } from './readme-examples.js';

/**
 * The SDK's README, as a reader compiles it: each ```ts example under `tsc --strict` against the
 * built package. No server and no database, so it runs once (scripts/test.mjs): tsc's answer is
 * the same on both engines, and it was about 20 s of CPU a run. sdk-readme.test.ts runs the
 * examples on each engine.
 */
const run = promisify(execFile);
// Inside the repository, so that `@workspace-platform/sdk` resolves as an installed package does.
fs.mkdirSync('.wsp-test', { recursive: true });
const dir = fs.mkdtempSync(path.resolve('.wsp-test/sdk-readme-compile-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the README has its five examples, and each compiles under tsc --strict', async () => {
  const found = readmeExamples();
  assert.deepEqual(
    found.map((e) => e.title),
    [
      'Every secret, page after page',
      "Create a dashboard, then change it without overwriting someone else's change",
      'Start a machine and wait until it runs',
      "Review a render before it reaches an install's main branch",
      'Errors',
    ],
  );
  writeExampleProject(dir, found);
  const tsc = await run(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', dir]).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
  assert.ok(!('failed' in tsc), `the README's examples do not compile:\n${tsc.stdout}`);
});
