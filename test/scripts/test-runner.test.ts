import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';

/**
 * scripts/test.mjs, the runner of npm test, on folders of fixture tests (WSP_TEST_DIR): it must
 * fail a run for a failing test and for a skip nobody named, pass a clean one, and say so.
 */
const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function runOn(files: Record<string, string>, extraEnv: Record<string, string> = {}, args: string[] = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-runner-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const env = { ...process.env, WSP_TEST_DIR: dir, WSP_TEST_ENGINES: 'sqlite', WSP_TEST_RECORD_TIMINGS: '', WSP_TEST_RESULTS: '', ...extraEnv };
  const res = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/test.mjs'), ...args], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 });
  return { code: res.status, out: `${res.stdout}${res.stderr}` };
}

const PASSING = `import { test } from 'node:test';\ntest('adds', () => { if (1 + 1 !== 2) throw new Error('no'); });\n`;

test('a clean run passes, counts its tests and runs a file that reaches no database once', () => {
  const { code, out } = runOn({ 'a/one.test.ts': PASSING, 'b/two.test.ts': PASSING });
  assert.equal(code, 0, out);
  assert.match(out, /2 files on sqlite \(2 without a database run once\)/);
  assert.match(out, /once\s+files 2, tests 2, pass 2, fail 0/);
  assert.match(out, /skips \(0;/);
});

test('a skipped test that EXPECTED_SKIPS does not name fails the run, and the summary names it', () => {
  const skipping = `import { test } from 'node:test';\ntest('later', { skip: 'not yet' }, () => {});\n`;
  const { code, out } = runOn({ 'ok.test.ts': PASSING, 'skips.test.ts': skipping });
  assert.equal(code, 1, out);
  assert.match(out, /UNEXPECTED \[once\] .*skips\.test\.ts › later: not yet/);
  assert.match(out, /1 unexpected skip\(s\)/);
});

test('a todo test is a skip too', () => {
  const todo = `import { test } from 'node:test';\ntest('someday', { todo: true }, () => {});\n`;
  const { code, out } = runOn({ 'todo.test.ts': todo });
  assert.equal(code, 1, out);
  assert.match(out, /UNEXPECTED .*todo\.test\.ts › someday/);
});

test('a failing test fails the run and is named', () => {
  const failing = `import { test } from 'node:test';\ntest('breaks', () => { throw new Error('broken on purpose'); });\n`;
  const { code, out } = runOn({ 'ok.test.ts': PASSING, 'fails.test.ts': failing });
  assert.equal(code, 1, out);
  assert.match(out, /✖ failed: .*fails\.test\.ts \[once\]/);
  assert.match(out, /broken on purpose/);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a file that never ends is killed after WSP_TEST_TIMEOUT_MS with the processes it started, fails the run, and the test under way is named', async () => {
  const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-runner-pid-')), 'server.pid');
  dirs.push(path.dirname(pidFile));
  // Like a test that started a server and hung: the server must not outlive the run.
  const hangs = [
    `import { test } from 'node:test';`,
    `import { spawn } from 'node:child_process';`,
    `import fs from 'node:fs';`,
    `test('waits', () => {`,
    `  const server = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });`,
    `  fs.writeFileSync(${JSON.stringify(pidFile)}, String(server.pid));`,
    `  return new Promise(() => setInterval(() => {}, 1000));`,
    `});`,
  ].join('\n');
  const hook = `import { test, before } from 'node:test';\nbefore(() => new Promise(() => setInterval(() => {}, 1000)));\ntest('never reached', () => {});\n`;
  const { code, out } = runOn({ 'hangs.test.ts': hangs, 'hook.test.ts': hook }, { WSP_TEST_TIMEOUT_MS: '3000' });
  assert.equal(code, 1, out);
  assert.match(out, /killed after 3000 ms/);
  assert.match(out, /✖ failed: .*hangs\.test\.ts \[once\] \(timed out; under way: "waits" \(for \d/);
  assert.match(out, /✖ killed after 3000 ms .*; under way: "waits"/);
  // A before hook runs once the first test is dequeued: that test is named, with the hook as the other possibility.
  assert.match(out, /✖ failed: .*hook\.test\.ts \[once\] \(timed out; under way: "never reached" \(for [\d.]+ s, the test or a hook run before it\)/);
  const serverPid = Number(fs.readFileSync(pidFile, 'utf8'));
  assert.ok(serverPid > 0);
  // SIGKILL is delivered at once, but the kernel may take a moment to reap.
  const deadline = Date.now() + 5000;
  while (alive(serverPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(serverPid), false, 'the server started by the killed file is gone too');
});

test('a file marked `// wsp-test: alone` runs first, and no file with no record of using little CPU runs beside it', () => {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-runner-log-')), 'log');
  dirs.push(path.dirname(log));
  // Each file notes when it began and ended; the alone one stays a while, so a file beside it would overlap.
  const noting = (name: string, ms: number, alone = false) =>
    [
      ...(alone ? ['// wsp-test: alone'] : []),
      `import { test } from 'node:test';`,
      `import fs from 'node:fs';`,
      `test('${name}', async () => {`,
      `  fs.appendFileSync(${JSON.stringify(log)}, '${name} from ' + Date.now() + '\\n');`,
      `  await new Promise((r) => setTimeout(r, ${ms}));`,
      `  fs.appendFileSync(${JSON.stringify(log)}, '${name} to ' + Date.now() + '\\n');`,
      `});`,
    ].join('\n');
  const { code, out } = runOn({ 'a.test.ts': noting('a', 300), 'b.test.ts': noting('b', 300), 'z.test.ts': noting('z', 1500, true) });
  assert.equal(code, 0, out);
  const lines = fs
    .readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' '));
  const at = (name: string, what: string) => Number(lines.find(([n, w]) => n === name && w === what)?.[2]);
  const spans = ['a', 'b', 'z'].map((name) => ({ name, from: at(name, 'from'), to: at(name, 'to') }));
  assert.ok(
    spans.every((s) => s.from > 0 && s.to >= s.from),
    JSON.stringify(lines),
  );
  const alone = spans.find((s) => s.name === 'z')!;
  for (const other of spans.filter((s) => s.name !== 'z')) assert.ok(other.from >= alone.to, `${other.name} began before the alone file ended: ${JSON.stringify(spans)}`);
});

/** A stand-in for eslint (WSP_TEST_LINT_COMMAND): the runner's wiring, not ESLint's rules, is under test here. */
const fakeLint = (code: number, text: string) => JSON.stringify([process.execPath, '-e', `process.stdout.write(${JSON.stringify(text)}); process.exit(${code})`]);

test("with --lint, an eslint error fails the run, eslint's output is printed, and the test files still run", () => {
  const report = 'src/a.ts\n  3:1  error  Promises must be awaited  @typescript-eslint/no-floating-promises\n';
  const { code, out } = runOn({ 'ok.test.ts': PASSING }, { WSP_TEST_LINT_COMMAND: fakeLint(1, report) }, ['--lint']);
  assert.equal(code, 1, out);
  assert.match(out, /✖ eslint \. \[once\]/);
  assert.match(out, /3:1 {2}error {2}Promises must be awaited/);
  assert.match(out, /✖ failed: eslint \. \[once\]/);
  assert.match(out, /eslint {3}FAILED/);
  assert.match(out, /once\s+files 1, tests 1, pass 1, fail 0/);
});

test('with --lint, a clean eslint passes the run and is not counted as a test file', () => {
  const { code, out } = runOn({ 'ok.test.ts': PASSING }, { WSP_TEST_LINT_COMMAND: fakeLint(0, '') }, ['--lint']);
  assert.equal(code, 0, out);
  assert.match(out, /=== npm test: eslint and 1 files on sqlite/);
  assert.match(out, /✔ eslint \. \[once\]/);
  assert.match(out, /eslint {3}no errors/);
  assert.match(out, /once\s+files 1, tests 1, pass 1, fail 0/);
});

test('without --lint, no eslint runs', () => {
  const { code, out } = runOn({ 'ok.test.ts': PASSING }, { WSP_TEST_LINT_COMMAND: fakeLint(1, 'should not run') });
  assert.equal(code, 0, out);
  assert.doesNotMatch(out, /eslint|should not run/);
});
