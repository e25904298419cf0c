import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeDirectory } from '../../src/shared/directories.js';
import { runWsp } from '../helpers/processes.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-dirs-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

test('makes every missing level with the mode asked, and again is a no-op', () => {
  const dir = path.join(root, 'a', 'b', 'c');
  makeDirectory(dir, 0o700);
  makeDirectory(dir, 0o700);
  for (const p of [path.join(root, 'a'), dir]) assert.equal(fs.statSync(p).mode & 0o777, 0o700 & ~process.umask());
});

test('a file in the way, or a path that cannot exist, is an error naming the directory', () => {
  fs.writeFileSync(path.join(root, 'file'), '');
  assert.throws(() => makeDirectory(path.join(root, 'file')), /is not a directory/);
  assert.throws(() => makeDirectory(path.join(root, 'file', 'below')), /cannot create the directory .*file\/below/);
  // Node's own recursive mkdir never returns here (a busy loop); this must fail at once.
  assert.throws(() => makeDirectory('/proc/wsp-nope/data'), /cannot create the directory \/proc\/wsp-nope\/data/);
});

/**
 * "Promptly": the command fails in about 0.2 s (a process start); one that spins in mkdir never
 * exits. The bound is the kill of the process, and its failure is this test's: generous for a
 * loaded machine, yet a spin fails here in seconds, not at the runner's own timeout.
 */
const PROMPTLY_MS = 5_000;

test('wsp admin with a WSP_DATA_DIR that cannot be made: exit 1 with a message, promptly', async () => {
  const res = await runWsp(['admin', 'workspace', 'create', '--name', 'x', '--json'], { WSP_DATA_DIR: '/proc/wsp-nope' }, PROMPTLY_MS).catch((err: Error) =>
    assert.fail(`wsp admin did not exit within ${PROMPTLY_MS} ms (killed): a data directory that cannot be made must fail at once, not spin\n${err.message}`),
  );
  assert.equal(res.code, 1, res.stderr);
  assert.match(res.stderr, /^error: .*\/proc\/wsp-nope/m);
  assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
});
