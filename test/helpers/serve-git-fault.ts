import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import type * as ServerModule from '../../src/server.js';
import type * as ConfigModule from '../../src/config.js';
import type * as GitStorageModule from '../../src/git/git-storage.js';

/**
 * `wsp serve` as the built command runs it (dist/), with one fault armed from outside: the process
 * kills itself (SIGKILL: no shutdown, no rollback it could run) at the moment a git step of its
 * repository storage is about to be taken for one commit. The file named by the first argument
 * holds `<step> <commit sha>`, written by the test when it wants the fault (empty: none):
 * - `advanceMain <sha>`: just before `main` would move to `<sha>` (a merge's branch move, after
 *   its transaction committed);
 * - `commitMessage <sha>`: when `<sha>`'s message is read (a merge reads its head's inside its
 *   transaction, before the commit).
 * Production has no such hook: the fault is in this wrapper only, which patches the storage's
 * class before the server builds it (test/faults/change-request-crash.test.ts). Run with
 * `node --import tsx`, as test/helpers/serve-moved-clock.ts.
 */
const [given, ...args] = process.argv.slice(2);
if (!given) throw new Error('usage: serve-git-fault.ts <fault file> [--no-worker]');
const faultFile: string = given;
const dist = (file: string) => pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href;
const { GitStorage } = (await import(dist('git/git-storage.js'))) as typeof GitStorageModule;
const { serve } = (await import(dist('server.js'))) as typeof ServerModule;
const { loadConfig } = (await import(dist('config.js'))) as typeof ConfigModule;

function armed(step: string, commit: string): boolean {
  const text = fs.existsSync(faultFile) ? fs.readFileSync(faultFile, 'utf8').trim() : '';
  return text === `${step} ${commit}`;
}
function die(step: string, commit: string): never {
  process.stderr.write(`serve-git-fault: SIGKILL at ${step} ${commit}\n`);
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is not delivered synchronously on every platform: nothing may run meanwhile.
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
}

const proto = GitStorage.prototype;
const advanceMain = proto.advanceMain;
proto.advanceMain = function (repoId: string, next: string, expected: string | null) {
  if (armed('advanceMain', next)) die('advanceMain', next);
  return advanceMain.call(this, repoId, next, expected);
};
const commitMessage = proto.commitMessage;
proto.commitMessage = function (repoId: string, commit: string) {
  if (armed('commitMessage', commit)) die('commitMessage', commit);
  return commitMessage.call(this, repoId, commit);
};

await serve(loadConfig(), { worker: !args.includes('--no-worker') });
