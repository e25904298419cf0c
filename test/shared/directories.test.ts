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

test('wsp admin with a WSP_DATA_DIR that cannot be made: exit 1 with a message, promptly', async () => {
  const started = Date.now();
  const res = await runWsp(['admin', 'workspace', 'create', '--name', 'x', '--json'], { WSP_DATA_DIR: '/proc/wsp-nope' }, 20_000);
  assert.equal(res.code, 1, res.stderr);
  assert.match(res.stderr, /^error: .*\/proc\/wsp-nope/m);
  assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
  assert.ok(Date.now() - started < 20_000);
});
