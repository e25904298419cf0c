import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** The SDK builds and passes its own tests from its own folder, as its package's `npm test`. */
test('packages/sdk: `npm test` there builds it and its tests pass', async () => {
  const { stdout } = await promisify(execFile)('npm', ['test'], { cwd: 'packages/sdk', timeout: 180_000 }).catch((err: { stdout: string; stderr: string }) => {
    assert.fail(`npm test in packages/sdk failed:\n${err.stdout}\n${err.stderr}`);
  });
  assert.match(stdout, /^# pass [1-9]\d*$/m);
  assert.match(stdout, /^# fail 0$/m);
});
